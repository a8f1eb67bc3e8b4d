package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// newJobsCmd is jobs: list, show and release the bridge's jobs.
func newJobsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "Inspect the bridge's jobs (one per source item and version)"}
	var cf, scf, rcf configFlags
	cmd.AddCommand(newJobsListCmd(&cf), newJobsShowCmd(&scf), newJobsReleaseCmd(&rcf))
	return cmd
}

// newJobsListCmd is jobs list: one line per job, filtered by --state and --source.
func newJobsListCmd(cf *configFlags) *cobra.Command {
	var state, source, listFormat string
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per job: id, source, item, state, reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := bridge.JobFilter{Source: source}
			if state != "" {
				for _, s := range strings.Split(state, ",") {
					if err := checkOneOf("--state", s, stateNames()); err != nil {
						return err
					}
					f.States = append(f.States, bridge.State(s))
				}
			}
			store, cfg, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			jobs, err := store.Jobs(cmd.Context(), f)
			if err != nil {
				return err
			}
			var sources []string
			for _, s := range cfg.Sources {
				sources = append(sources, s.Name)
			}
			if err := checkKnown("--source", source, sources, func() (bool, error) {
				if len(jobs) > 0 {
					return true, nil
				}
				all, err := store.Jobs(cmd.Context(), bridge.JobFilter{Source: source})
				return len(all) > 0, err
			}); err != nil {
				return err
			}
			views := make([]jobView, 0, len(jobs))
			for i := range jobs {
				views = append(views, newJobView(&jobs[i]))
			}
			return printOutput(cmd.OutOrStdout(), listFormat, listOf(views), func(w io.Writer) {
				fmt.Fprintln(w, "ID\tSOURCE\tITEM\tSTATE\tREASON")
				for _, j := range views {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", j.ID, j.Source, j.ItemID, j.State, oneLine(j.Reason))
				}
			})
		},
	}
	cf.register(list)
	list.Flags().StringVar(&state, "state", "", "only jobs in these states (comma-separated): "+strings.Join(stateNames(), ", "))
	list.Flags().StringVar(&source, "source", "", "only jobs of this source (a configured one, or one the store has jobs of)")
	addOutputFlag(list, &listFormat, formatTable)
	return list
}

// newJobsShowCmd is jobs show: a job and its history.
func newJobsShowCmd(cf *configFlags) *cobra.Command {
	var showFormat string
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a job and its history",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			j, err := loadJob(cmd, store, args[0])
			if err != nil {
				return err
			}
			h, err := store.History(cmd.Context(), j.ID)
			if err != nil {
				return err
			}
			v := jobDetailView{jobView: newJobView(j), History: make([]changeView, 0, len(h))}
			for _, c := range h {
				v.History = append(v.History, changeView{At: utc(c.At), From: string(c.From), To: string(c.To), Reason: api.Redact(c.Reason)})
			}
			return printOutput(cmd.OutOrStdout(), showFormat, v, v.table)
		},
	}
	cf.register(show)
	addOutputFlag(show, &showFormat, formatTable)
	return show
}

// newJobsReleaseCmd is jobs release: a held job's author assigned by hand (bridge.Release).
func newJobsReleaseCmd(cf *configFlags) *cobra.Command {
	var author string
	release := &cobra.Command{
		Use:   "release ID [--author email:…|user:…]",
		Short: "Assign a held job's author by hand, or (without --author) try a held job again now",
		Long: "With --author, the held job's owner is assigned by hand: it is mapped and uploaded on the next step.\n" +
			"Without, a job held for a reason no author settles (a source that refused the download until its\n" +
			"account is set up, a source that kept failing, a setting, the balance) is tried again at once.",
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if author != "" {
				if err := api.ValidateAuthor(author, true); err != nil {
					return usageError("--author %q: %v", author, err)
				}
			}
			store, _, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			j, err := bridge.Release(cmd.Context(), store, args[0], author, time.Now().UTC())
			if errors.Is(err, bridge.ErrNotFound) {
				return unknownID("job", args[0])
			}
			if errors.Is(err, bridge.ErrNotHeld) || errors.Is(err, bridge.ErrNeedsAuthor) {
				return &exitError{code: exitFailed, err: err}
			}
			if err != nil {
				return err
			}
			if author == "" {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s (%s) released: bridge run tries it again on its next step\n", j.ID, j.Name)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s released with author %s; bridge run uploads it\n", j.ID, author)
			return nil
		},
	}
	release.Flags().StringVar(&author, "author", "", "the member who owns the recording: email:<address> or user:<uuid>")
	cf.register(release)
	return release
}

// stateNames are the job states, for --state and its errors.
func stateNames() []string {
	out := make([]string, len(bridge.States))
	for i, s := range bridge.States {
		out[i] = string(s)
	}
	return out
}

// jobView is a job as jobs list and jobs show print it in JSON and YAML.
type jobView struct {
	// ID is the job's UUID (sent upstream as metadata bridge_job).
	ID string `json:"id"`
	// Source is the configured source the recording came from.
	Source string `json:"source"`
	// ItemID identifies the recording within its source (a path, a file id, a meeting id).
	ItemID string `json:"item_id"`
	// Version is the item's version; each version is its own job.
	Version string `json:"version"`
	// Name is the file name sent to the service.
	Name string `json:"name"`
	// Size is the byte count (0 when the source does not know it before download).
	Size int64 `json:"size"`
	// ModTime is when the item last changed at the source.
	ModTime time.Time `json:"mod_time,omitzero"`
	// Link points to the item at its source.
	Link string `json:"link,omitempty"`
	// SourceExternalID is the source's own external id for the item.
	SourceExternalID string `json:"source_external_id,omitempty"`
	// Owner is the external user who owns the item at the source.
	Owner *ownerView `json:"owner,omitempty"`
	// State is one of the job states (discovered … done, held, skipped, failed, resubmit).
	State string `json:"state"`
	// Reason says why the job is held, skipped or failed (an upstream code kept verbatim).
	Reason string `json:"reason,omitempty"`
	// Author is the X-Author the job is uploaded with.
	Author string `json:"author,omitempty"`
	// ExternalID is the X-External-Id the job is uploaded with.
	ExternalID string `json:"external_id,omitempty"`
	// Metadata is the X-Metadata object the job is uploaded with.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// IdempotencyKey is the key every attempt of the current upload carries.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Attempts counts upload attempts across keys.
	Attempts int `json:"attempts"`
	// AttemptAt is when the current key's first attempt started.
	AttemptAt time.Time `json:"attempt_at,omitzero"`
	// TranscriptionID is the service's id once the upload was accepted.
	TranscriptionID string `json:"transcription_id,omitempty"`
	// RequiredMinutes is what the service said the file needs (insufficient_balance).
	RequiredMinutes float64 `json:"required_minutes,omitempty"`
	// NextAt is when the job is due to be looked at again.
	NextAt time.Time `json:"next_at,omitzero"`
	// CreatedAt is when the job was stored.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// UpdatedAt is when the job last changed.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// ownerView is the external user a recording belongs to at its source.
type ownerView struct {
	// Provider is the identity provider (zoom, gdrive, localdir, …).
	Provider string `json:"provider"`
	// ID is the user's id at the provider.
	ID string `json:"id"`
	// Email is the user's e-mail, when the source gives it.
	Email string `json:"email,omitempty"`
}

// newOwnerView is o as a view; nil when the owner is unknown.
func newOwnerView(o *connectors.Owner) *ownerView {
	if o == nil {
		return nil
	}
	return &ownerView{Provider: o.Provider, ID: o.ID, Email: o.Email}
}

// newJobView is j as printed. The source's own fields (S3 user metadata, Zoom download URLs)
// are left out: they are the source's business and may hold what should not be shown; free
// text (reasons) goes through api.Redact.
func newJobView(j *bridge.Job) jobView {
	return jobView{ID: j.ID, Source: j.Source, ItemID: j.ItemID, Version: j.Version, Name: j.Name, Size: j.Size,
		ModTime: utc(j.ModTime), Link: j.Link, SourceExternalID: j.SourceExternalID, Owner: newOwnerView(j.Owner),
		State: string(j.State), Reason: api.Redact(j.Reason), Author: j.Author, ExternalID: j.ExternalID, Metadata: rawObject(j.Metadata),
		IdempotencyKey: j.IdempotencyKey, Attempts: j.Attempts, AttemptAt: utc(j.AttemptAt), TranscriptionID: j.TranscriptionID,
		RequiredMinutes: j.RequiredMinutes, NextAt: utc(j.NextAt), CreatedAt: utc(j.CreatedAt), UpdatedAt: utc(j.UpdatedAt)}
}

// jobDetailView is what jobs show prints: the job's fields and its history.
type jobDetailView struct {
	jobView
	// History lists the job's state changes, oldest first.
	History []changeView `json:"history"`
}

// changeView is one state change of a job.
type changeView struct {
	// At is when the change happened.
	At time.Time `json:"at,omitzero"`
	// From is the state before (left out for the first entry).
	From string `json:"from,omitempty"`
	// To is the state after.
	To string `json:"to"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
}

// table prints the job one field a line, then its history.
func (v jobDetailView) table(w io.Writer) {
	owner := ""
	if v.Owner != nil {
		owner = v.Owner.Provider + ":" + v.Owner.ID
		if v.Owner.Email != "" {
			owner += " <" + v.Owner.Email + ">"
		}
	}
	size := ""
	if v.Size > 0 {
		size = strconv.FormatInt(v.Size, 10)
	}
	var minutes string
	if v.RequiredMinutes > 0 {
		minutes = strconv.FormatFloat(v.RequiredMinutes, 'f', -1, 64)
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return tableTime(t)
	}
	printFields(w, "id", v.ID, "source", v.Source, "item_id", v.ItemID, "version", v.Version, "name", v.Name,
		"size", size, "mod_time", at(v.ModTime), "link", v.Link, "source_external_id", v.SourceExternalID, "owner", owner,
		"state", v.State, "reason", v.Reason, "author", v.Author, "external_id", v.ExternalID, "metadata", string(v.Metadata),
		"idempotency_key", v.IdempotencyKey, "attempts", strconv.Itoa(v.Attempts), "attempt_at", at(v.AttemptAt),
		"transcription_id", v.TranscriptionID, "required_minutes", minutes, "next_at", at(v.NextAt),
		"created_at", at(v.CreatedAt), "updated_at", at(v.UpdatedAt))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "AT\tFROM\tTO\tREASON")
	for _, c := range v.History {
		from := c.From
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", tableTime(c.At), from, c.To, oneLine(c.Reason))
	}
}

// oneLine is s for a table cell: on one line, at most 120 bytes.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// loadJob reads job id; an unknown id is a usage error (exit 2) naming it.
func loadJob(cmd *cobra.Command, store bridge.Store, id string) (*bridge.Job, error) {
	j, err := store.Job(cmd.Context(), id)
	if errors.Is(err, bridge.ErrNotFound) {
		return nil, unknownID("job", id)
	}
	return j, err
}
