package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/mapping"
)

// configuredClient builds the API client from the configuration (api.base_url and the key);
// the in-process sandbox has nothing to bind, so a base URL is required.
func configuredClient(cfg *Config) (*api.Client, error) {
	if cfg.API.BaseURL == "" {
		return nil, usageError("api.base_url: required here (the in-process sandbox only lives while bridge run does)")
	}
	key := cfg.API.Key
	if key == "" {
		b, err := os.ReadFile(cfg.API.KeyFile)
		if err != nil {
			return nil, usageError("api.key_file: %v", err)
		}
		key = strings.TrimSpace(string(b))
	}
	c, err := api.New(api.Config{BaseURL: cfg.API.BaseURL, Key: key, DataPerMinute: cfg.API.RequestsPerMinute})
	if err != nil {
		return nil, usageError("api: %v", err)
	}
	return c, nil
}

// identityPlan gathers the source's external users (what it lists now, and the owners of its
// held jobs in store) and plans their bindings with client.
func identityPlan(ctx context.Context, cfg *Config, name string, prune bool, client *api.Client, store bridge.Store) ([]mapping.Action, error) {
	src, sc, err := sourceByName(cfg, name)
	if err != nil {
		return nil, err
	}
	provider := sc.Mapping.Provider
	if provider == "" {
		provider = sc.Type
	}
	m, err := mapping.New(sc.Name, sc.Type, "plan", mapping.Rules{Provider: provider, Map: sc.Mapping.Map, MapFile: sc.Mapping.MapFile})
	if err != nil {
		return nil, usageError("sources %s: %v", name, err)
	}
	recs, _, err := src.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", name, err)
	}
	var owners []bridge.Owner
	for _, r := range recs {
		if r.Owner != nil {
			owners = append(owners, *r.Owner)
		}
	}
	held, err := store.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateHeld}, Source: name})
	if err != nil {
		return nil, err
	}
	for _, j := range held {
		if j.Owner != nil {
			owners = append(owners, *j.Owner)
		}
	}
	return m.Plan(ctx, client, owners, prune)
}

// planFromConfig opens what identityPlan needs from the configuration.
func planFromConfig(ctx context.Context, cfg *Config, name string, prune bool) (*api.Client, []mapping.Action, error) {
	client, err := configuredClient(cfg)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStoreAt(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	plan, err := identityPlan(ctx, cfg, name, prune, client, store)
	return client, plan, err
}

// noteMappingChange records in store that bindings may have changed, and says so: a running
// bridge (in any process on the store) sees it within seconds and maps its held jobs again
// with a fresh member list.
func noteMappingChange(cmd *cobra.Command, store bridge.Store, reason string) error {
	ch, err := store.NoteMappingChange(cmd.Context(), reason, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("bindings changed, but a running bridge could not be told (it maps held jobs again within minutes): %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "mapping change %d noted: a running bridge maps its held jobs again within seconds\n", ch.Generation)
	return nil
}

// syncIdentities is the scheduled form of identities apply (mapping.sync), logged; held jobs
// of the source are mapped again at once when a binding was created.
func syncIdentities(ctx context.Context, cfg *Config, name string, client *api.Client, store bridge.Store, p *bridge.Pipeline, log *slog.Logger) {
	plan, err := identityPlan(ctx, cfg, name, false, client, store)
	if err != nil {
		log.Error("identity sync", "source", name, "err", err)
		return
	}
	res, err := mapping.Apply(ctx, client, plan)
	counts := map[string]int{}
	for _, r := range res {
		counts[strings.SplitN(r.Outcome, ":", 2)[0]]++
	}
	for _, a := range plan {
		if a.Kind == mapping.ActUnmatched || a.Kind == mapping.ActMissing || a.Kind == mapping.ActInvalid {
			counts[a.Kind]++
		}
	}
	log.Info("identity sync", "source", name, "outcomes", counts, "err", err)
	if counts["created"] > 0 {
		if err := p.RemapHeld(ctx, name); err != nil {
			log.Error("identity sync: remap held jobs", "source", name, "err", err)
		}
	}
}

func printPlan(w *tabwriter.Writer, plan []mapping.Action, outcome func(i int) string) {
	fmt.Fprintln(w, "EXTERNAL USER\tE-MAIL\tMEMBER\tACTION\tWHY")
	for i, a := range plan {
		act := a.Kind
		if o := outcome(i); o != "" {
			act = o
		}
		fmt.Fprintf(w, "%s:%s\t%s\t%s\t%s\t%s\n", a.Identity.Provider, a.Identity.ExternalID, a.Email, a.MemberMail, act, a.Why)
	}
	w.Flush()
}

func newIdentitiesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "identities", Short: "Bind the sources' external users to workspace members"}
	var cf configFlags
	var source string
	var prune bool
	plan := &cobra.Command{
		Use:   "plan --source NAME",
		Short: "Show which external users would be bound to which members, and which are unmatched",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			_, p, err := planFromConfig(cmd.Context(), cfg, source, prune)
			if err != nil {
				return err
			}
			printPlan(tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0), p, func(int) string { return "" })
			return nil
		},
	}
	apply := &cobra.Command{
		Use:   "apply --source NAME [--prune]",
		Short: "Perform the plan: PUT the bindings (conflicts reported, never overwritten); --prune DELETEs those the map no longer has",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			client, p, err := planFromConfig(cmd.Context(), cfg, source, prune)
			if err != nil {
				return err
			}
			res, err := mapping.Apply(cmd.Context(), client, p)
			outcomes := map[string]string{}
			for _, r := range res {
				outcomes[r.Identity.ExternalID+"\x00"+r.Kind] = r.Outcome
			}
			printPlan(tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0), p, func(i int) string {
				return outcomes[p[i].Identity.ExternalID+"\x00"+p[i].Kind]
			})
			// Even when nothing was created here: a binding made in the application is news too.
			counts := map[string]int{}
			for _, r := range res {
				counts[strings.SplitN(r.Outcome, ":", 2)[0]]++
			}
			reason := fmt.Sprintf("identities apply --source %s: %d created, %d removed", source, counts["created"], counts["removed"])
			store, serr := openStoreAt(cmd.Context(), cfg)
			if serr != nil {
				return errors.Join(err, serr)
			}
			defer store.Close()
			return errors.Join(err, noteMappingChange(cmd, store, reason))
		},
	}
	var doIt bool
	reassign := &cobra.Command{
		Use:   "reassign --source NAME [--apply]",
		Short: "After bindings change, set the authors of the source's transcriptions to their owners' members (a dry run without --apply)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			return reassignAuthors(cmd, cfg, source, doIt)
		},
	}
	reassign.Flags().BoolVar(&doIt, "apply", false, "PATCH the authors (default: only show what would change)")
	for _, c := range []*cobra.Command{plan, apply, reassign} {
		cf.register(c)
		c.Flags().StringVar(&source, "source", "", "the source whose users to bind")
		c.Flags().BoolVar(&prune, "prune", false, "also remove bindings of the provider that the map no longer has")
		c.MarkFlagRequired("source")
		cmd.AddCommand(c)
	}
	return cmd
}

// reassignAuthors maps each uploaded job's owner again with the current bindings and, with
// doIt, PATCHes the transcriptions whose author changes.
func reassignAuthors(cmd *cobra.Command, cfg *Config, name string, doIt bool) error {
	ctx := cmd.Context()
	_, sc, err := sourceByName(cfg, name)
	if err != nil {
		return err
	}
	if len(sc.Mapping.Rules) == 0 {
		return usageError("source %s: reassign needs mapping.rules", name)
	}
	client, err := configuredClient(cfg)
	if err != nil {
		return err
	}
	m, err := mapping.New(sc.Name, sc.Type, "reassign", mapping.Rules{Provider: sc.Mapping.Provider, Resolve: sc.Mapping.Rules,
		Otherwise: sc.Mapping.Otherwise, Map: sc.Mapping.Map, MapFile: sc.Mapping.MapFile, Author: sc.Author,
		Members: &mapping.Members{Dir: client}})
	if err != nil {
		return usageError("source %s: %v", name, err)
	}
	store, err := openStoreAt(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	jobs, err := store.Jobs(ctx, bridge.JobFilter{Source: name, States: []bridge.State{bridge.StateQueued, bridge.StateProcessing, bridge.StateTranscribed, bridge.StateDone}})
	if err != nil {
		return err
	}
	members, err := client.Members(ctx)
	if err != nil {
		return fmt.Errorf("members: %w", err)
	}
	// member resolves any author form to the member's e-mail form, to compare like with like.
	member := func(author string) string {
		kind, val, _ := strings.Cut(author, ":")
		for _, mem := range members {
			switch {
			case kind == "email" && strings.EqualFold(val, mem.Email), kind == "user" && val == mem.ID:
				return "email:" + mem.Email
			case kind == "external":
				for _, id := range mem.Identities {
					if "external:"+id.Provider+":"+id.ExternalID == author {
						return "email:" + mem.Email
					}
				}
			}
		}
		return author
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TRANSCRIPTION\tITEM\tAUTHOR NOW\tAUTHOR THEN\tACTION")
	changed, failed := 0, 0
	for _, j := range jobs {
		want, ok, err := m.AuthorFor(ctx, j.Owner)
		if err != nil {
			return err
		}
		if !ok || j.TranscriptionID == "" {
			continue
		}
		t, err := client.Get(ctx, j.TranscriptionID) // who owns it now, upstream
		if errors.Is(err, api.ErrNotFound) {         // deleted upstream since
			continue
		}
		if err != nil {
			return err
		}
		then := "email:" + t.Author.Email
		if member(want) == member(then) {
			continue
		}
		action := "would reassign"
		if doIt {
			if _, err := client.Assign(ctx, j.TranscriptionID, want); err != nil {
				action, failed = "error: "+err.Error(), failed+1
			} else {
				from := j.State
				j.Author, j.UpdatedAt = want, time.Now().UTC()
				if err := store.Update(ctx, &j, from, "reassigned to "+want); err != nil {
					return err
				}
				action = "reassigned"
			}
		}
		changed++
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", j.TranscriptionID, j.ItemID, want, then, action)
	}
	w.Flush()
	fmt.Fprintf(cmd.OutOrStdout(), "%d transcription(s) to reassign\n", changed)
	var noted error
	if doIt { // reassign follows changed bindings: held jobs may now map too
		noted = noteMappingChange(cmd, store, fmt.Sprintf("identities reassign --source %s --apply: %d reassigned", name, changed-failed))
	}
	if failed > 0 {
		return errors.Join(fmt.Errorf("%d reassignment(s) failed", failed), noted)
	}
	return noted
}
