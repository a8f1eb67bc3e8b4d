package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
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
	var owners []connectors.Owner
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

// noteMappingChange records in store that bindings may have changed, and says so on w: a
// running bridge (in any process on the store) sees it within seconds and maps its held jobs
// again with a fresh member list.
func noteMappingChange(cmd *cobra.Command, w io.Writer, store bridge.Store, reason string) error {
	ch, err := store.NoteMappingChange(cmd.Context(), reason, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("bindings changed, but a running bridge could not be told (it maps held jobs again within minutes): %w", err)
	}
	fmt.Fprintf(w, "mapping change %d noted: a running bridge maps its held jobs again within seconds\n", ch.Generation)
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
	level := slog.LevelInfo
	for outcome := range counts {
		if outcome != "created" && outcome != "unchanged" && outcome != mapping.ActUnmatched {
			level = slog.LevelWarn // conflicts, invalid ids, members who left: someone should look
		}
	}
	if err != nil {
		level = slog.LevelError
	}
	log.Log(ctx, level, "identity sync", "source", name, "outcomes", counts, "err", err)
	if counts["created"] > 0 {
		// Other processes on this store (and this one's other sources) hear of it too.
		if _, err := store.NoteMappingChange(ctx, fmt.Sprintf("mapping.sync --source %s: %d created", name, counts["created"]), time.Now()); err != nil {
			log.Error("identity sync: note the mapping change", "source", name, "err", err)
		}
		if err := p.RemapHeld(ctx, name); err != nil {
			log.Error("identity sync: remap held jobs", "source", name, "err", err)
		}
	}
}

// identityView is one line of an identity plan as identities plan prints it in JSON and YAML.
type identityView struct {
	// Provider is the identity provider of the external user (zoom, gdrive, …).
	Provider string `json:"provider"`
	// ExternalID is the user's id at the provider.
	ExternalID string `json:"external_id"`
	// Email is the external user's e-mail, when known.
	Email string `json:"email,omitempty"`
	// MemberID is the workspace member the user is or would be bound to.
	MemberID string `json:"member_id,omitempty"`
	// MemberEmail is that member's e-mail.
	MemberEmail string `json:"member_email,omitempty"`
	// Action is bound (nothing to do), bind, unmatched, invalid, missing (the map names someone
	// who is not a member) or prune.
	Action string `json:"action"`
	// Why says how the member was found, or what is wrong.
	Why string `json:"why,omitempty"`
	// Outcome is what identities apply did: created, unchanged, conflict, removed, or the error.
	Outcome string `json:"outcome,omitempty"`
}

// identityViews are plan's lines as printed, with outcome(i) (may be "") for the i-th.
func identityViews(plan []mapping.Action, outcome func(i int) string) []identityView {
	out := make([]identityView, 0, len(plan))
	for i, a := range plan {
		out = append(out, identityView{Provider: a.Identity.Provider, ExternalID: a.Identity.ExternalID, Email: a.Email,
			MemberID: a.MemberID, MemberEmail: a.MemberMail, Action: a.Kind, Why: a.Why, Outcome: outcome(i)})
	}
	return out
}

// identityTable prints one line per external user; the action column shows what apply did
// when it did something.
func identityTable(views []identityView) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "EXTERNAL USER\tE-MAIL\tMEMBER\tACTION\tWHY")
		for _, v := range views {
			act := v.Action
			if v.Outcome != "" {
				act = v.Outcome
			}
			fmt.Fprintf(w, "%s:%s\t%s\t%s\t%s\t%s\n", v.Provider, v.ExternalID, v.Email, v.MemberEmail, act, v.Why)
		}
	}
}

func newIdentitiesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "identities", Short: "Bind the sources' external users to workspace members"}
	var cf configFlags
	var source, planFormat, reassignFormat string
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
			views := identityViews(p, func(int) string { return "" })
			return printOutput(cmd.OutOrStdout(), planFormat, listOf(views), identityTable(views))
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
			views := identityViews(p, func(i int) string { return outcomes[p[i].Identity.ExternalID+"\x00"+p[i].Kind] })
			if perr := printOutput(cmd.OutOrStdout(), formatTable, nil, identityTable(views)); perr != nil {
				return errors.Join(err, perr)
			}
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
			return errors.Join(err, noteMappingChange(cmd, cmd.OutOrStdout(), store, reason))
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
			return reassignAuthors(cmd, cfg, source, doIt, reassignFormat)
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
	addOutputFlag(plan, &planFormat, formatTable)
	addOutputFlag(reassign, &reassignFormat, formatTable)
	return cmd
}

// reassignView is one transcription identities reassign would reassign (or did), as printed in
// JSON and YAML.
type reassignView struct {
	// TranscriptionID is the transcription at the service.
	TranscriptionID string `json:"transcription_id"`
	// JobID is the bridge job that uploaded it.
	JobID string `json:"job_id"`
	// ItemID is the recording within its source.
	ItemID string `json:"item_id"`
	// Author is the author the owner maps to now (the X-Author form).
	Author string `json:"author"`
	// UpstreamAuthor is the author the transcription had at the service (email:…).
	UpstreamAuthor string `json:"upstream_author"`
	// Action is would_reassign (without --apply), reassigned or failed.
	Action string `json:"action"`
	// Error is why a reassignment failed.
	Error string `json:"error,omitempty"`
}

// reassignActions are the values of reassignView.Action.
const (
	reassignWould  = "would_reassign"
	reassignDone   = "reassigned"
	reassignFailed = "failed"
)

// reassignAuthors maps each uploaded job's owner again with the current bindings and, with
// doIt, PATCHes the transcriptions whose author changes; it prints them in format.
func reassignAuthors(cmd *cobra.Command, cfg *Config, name string, doIt bool, format string) error {
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
	views := []reassignView{}
	failed := 0
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
		v := reassignView{TranscriptionID: j.TranscriptionID, JobID: j.ID, ItemID: j.ItemID, Author: want, UpstreamAuthor: then, Action: reassignWould}
		if doIt {
			if _, err := client.Assign(ctx, j.TranscriptionID, want); err != nil {
				v.Action, v.Error, failed = reassignFailed, api.Redact(err.Error()), failed+1
			} else {
				from := j.State
				j.Author, j.UpdatedAt = want, time.Now().UTC()
				if err := store.Update(ctx, &j, from, "reassigned to "+want); err != nil {
					return err
				}
				v.Action = reassignDone
			}
		}
		views = append(views, v)
	}
	err = printOutput(cmd.OutOrStdout(), format, listOf(views), func(w io.Writer) {
		fmt.Fprintln(w, "TRANSCRIPTION\tITEM\tAUTHOR NOW\tAUTHOR THEN\tACTION")
		for _, v := range views {
			action := strings.ReplaceAll(v.Action, "_", " ")
			if v.Error != "" {
				action = "error: " + v.Error
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", v.TranscriptionID, v.ItemID, v.Author, v.UpstreamAuthor, oneLine(action))
		}
		fmt.Fprintf(w, "%d transcription(s) to reassign\n", len(views))
	})
	if err != nil {
		return err
	}
	var noted error
	if doIt { // reassign follows changed bindings: held jobs may now map too
		notes := cmd.OutOrStdout()
		if format != formatTable { // stdout holds one document
			notes = cmd.ErrOrStderr()
		}
		noted = noteMappingChange(cmd, notes, store, fmt.Sprintf("identities reassign --source %s --apply: %d reassigned", name, len(views)-failed))
	}
	if failed > 0 {
		return errors.Join(fmt.Errorf("%d reassignment(s) failed", failed), noted)
	}
	return noted
}
