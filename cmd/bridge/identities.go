package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/mapping"
)

// configuredClient builds the API client from the configuration (api.base_url and the key),
// as bridge run does: without api.base_url, to an in-process sandbox on the state bridge run
// keeps (sandbox.db), which stop shuts down, its warning logged on w.
func configuredClient(ctx context.Context, cfg *Config, w io.Writer) (client *api.Client, stop func(), err error) {
	return connectAPI(ctx, cfg, newLogger(w))
}

// identityPlan plans the bindings of source name's external users with client
// (bridge.PlanIdentities).
func identityPlan(ctx context.Context, cfg *Config, name string, prune bool, client *api.Client, store bridge.Store) ([]mapping.Action, error) {
	src, sc, err := sourceByName(cfg, name)
	if err != nil {
		return nil, err
	}
	m, err := newMapper(*sc, "plan", nil)
	if err != nil {
		return nil, usageError("sources %s: %v", name, err)
	}
	return bridge.PlanIdentities(ctx, store, name, src, m, client, prune)
}

// planFromConfig opens what identityPlan needs from the configuration (logging on w); stop
// shuts down the in-process sandbox, if one was started.
func planFromConfig(ctx context.Context, cfg *Config, name string, prune bool, w io.Writer) (*api.Client, func(), []mapping.Action, error) {
	if _, _, err := sourceByName(cfg, name); err != nil { // before anything is opened or created
		return nil, nil, nil, err
	}
	client, stop, err := configuredClient(ctx, cfg, w)
	if err != nil {
		return nil, nil, nil, err
	}
	store, err := openStoreAt(ctx, cfg)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	defer store.Close()
	plan, err := identityPlan(ctx, cfg, name, prune, client, store)
	return client, stop, plan, err
}

// noteMappingChange records in store that bindings may have changed, and says so on w: a
// running bridge (in any process on the store) sees it within seconds and maps its held jobs
// again with a fresh member list.
func noteMappingChange(cmd *cobra.Command, w io.Writer, store bridge.Store, reason string) error {
	ch, err := store.NoteMappingChange(cmd.Context(), reason, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("bindings changed, but a running bridge could not be told (it maps held jobs again within minutes): %w", err)
	}
	notice(w, fmt.Sprintf("mapping change %d noted: a running bridge maps its held jobs again within seconds", ch.Generation), "generation", ch.Generation)
	return nil
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
			_, stop, p, err := planFromConfig(cmd.Context(), cfg, source, prune, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			stop()
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
			return applyIdentities(cmd, cfg, source, prune)
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
// doIt, reassigns the transcriptions whose author changes (bridge.Reassign); it prints them in
// format.
func reassignAuthors(cmd *cobra.Command, cfg *Config, name string, doIt bool, format string) error {
	ctx := cmd.Context()
	_, sc, err := sourceByName(cfg, name)
	if err != nil {
		return err
	}
	if len(sc.Mapping.Rules) == 0 {
		return usageError("source %s: reassign needs mapping.rules", name)
	}
	client, stop, err := configuredClient(ctx, cfg, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer stop()
	m, err := newMapper(*sc, "reassign", &mapping.Members{Dir: client})
	if err != nil {
		return usageError("source %s: %v", name, err)
	}
	store, err := openStoreAt(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	found, err := bridge.Reassign(ctx, store, m, client, name, doIt, time.Now().UTC())
	if err != nil {
		return err
	}
	views := make([]reassignView, 0, len(found))
	failed := 0
	for _, r := range found {
		v := reassignView{TranscriptionID: r.TranscriptionID, JobID: r.JobID, ItemID: r.ItemID, Author: r.Author, UpstreamAuthor: r.UpstreamAuthor, Action: reassignWould}
		switch {
		case r.Err != nil:
			v.Action, v.Error, failed = reassignFailed, api.Redact(r.Err.Error()), failed+1
		case r.Done:
			v.Action = reassignDone
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

// applyIdentities is identities apply: the plan of source's bindings performed, printed with
// each outcome, and the change noted in the store for a running bridge.
func applyIdentities(cmd *cobra.Command, cfg *Config, source string, prune bool) error {
	client, stop, p, err := planFromConfig(cmd.Context(), cfg, source, prune, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer stop()
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
	counts := mapping.Outcomes(res)
	reason := fmt.Sprintf("identities apply --source %s: %d created, %d removed", source, counts["created"], counts["removed"])
	store, serr := openStoreAt(cmd.Context(), cfg)
	if serr != nil {
		return errors.Join(err, serr)
	}
	defer store.Close()
	return errors.Join(err, noteMappingChange(cmd, cmd.OutOrStdout(), store, reason))
}
