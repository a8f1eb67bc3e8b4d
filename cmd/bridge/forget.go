package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// newForgetCmd is forget: a person's or a recording's transcriptions deleted upstream and
// locally, a tombstone kept, and transcription.deleted sent (bridge.Forget).
func newForgetCmd() *cobra.Command {
	var cf configFlags
	var t bridge.ForgetTarget
	var dryRun bool
	var format string
	cmd := &cobra.Command{
		Use:   "forget --job ID | --external-id X | --owner-email E [--dry-run]",
		Short: "Forget a recording or a person: delete the transcriptions upstream and here, keep a tombstone, tell the endpoints",
		Long: "Each job named is forgotten: its transcription is deleted upstream (DELETE /transcriptions/{id}, which needs\n" +
			"the key's transcriptions:delete right), the job ends deleted without the recording's name, link, owner and\n" +
			"metadata, its delivery payloads, attempt bodies, events and the exports' local copies are removed, a tombstone (ids only) keeps later\n" +
			"scans from uploading the item again and exports from taking it, and a signed transcription.deleted goes to\n" +
			"every endpoint subscribed. A second run finds nothing to do; --dry-run lists what it would do.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n := btoi(t.JobID != "") + btoi(t.ExternalID != "") + btoi(t.OwnerEmail != ""); n != 1 {
				return usageError("forget: give exactly one of --job, --external-id and --owner-email")
			}
			store, cfg, err := openStore(cmd, &cf)
			if err != nil {
				return err
			}
			defer store.Close()
			client, stop, err := connectAPI(cmd.Context(), cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				return err
			}
			defer stop()
			who := "cli " + currentUser()
			copies := func(ctx context.Context, id string, dry bool) ([]string, error) {
				return export.RemoveCopies(ctx, store, id, dry)
			}
			out, err := bridge.Forget(cmd.Context(), store, client, t, who, dryRun, time.Now().UTC(), copies)
			if !dryRun {
				auditForget(cmd.Context(), store, who, t, out, err)
			}
			if errors.Is(err, bridge.ErrNotFound) || errors.Is(err, bridge.ErrDeleteRight) {
				return &exitError{code: exitFailed, err: err}
			}
			if perr := printOutput(cmd.OutOrStdout(), format, listOf(out), func(w io.Writer) { forgetTable(w, out, dryRun) }); perr != nil {
				return perr
			}
			return err
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&t.JobID, "job", "", "forget this job")
	cmd.Flags().StringVar(&t.ExternalID, "external-id", "", "forget every job uploaded with this X-External-Id")
	cmd.Flags().StringVar(&t.OwnerEmail, "owner-email", "", "forget every job whose recording's owner (or author) has this e-mail address")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "change nothing: list what would be done")
	addOutputFlag(cmd, &format, formatTable)
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// currentUser names who runs the command, for the audit log.
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// auditForget records a forget (not a dry run) in the audit log; a failure to record is printed
// by no one: the forget itself is what counts.
func auditForget(ctx context.Context, store bridge.AuditStore, who string, t bridge.ForgetTarget, out []bridge.Forgotten, err error) {
	e := bridge.AuditEntry{At: time.Now().UTC(), Who: who, Action: "forget", Targets: []string{}, Detail: t.String()}
	for _, f := range out {
		e.Targets = append(e.Targets, f.JobID)
	}
	if err != nil {
		e.Error = err.Error()
	}
	_ = store.Audit(ctx, e)
}

// forgetTable prints one line per action, or says there was nothing to do.
func forgetTable(w io.Writer, out []bridge.Forgotten, dryRun bool) {
	n := 0
	for _, f := range out {
		for _, a := range f.Actions {
			if n == 0 {
				fmt.Fprintln(w, "JOB\tTRANSCRIPTION\tACTION")
			}
			n++
			fmt.Fprintf(w, "%s\t%s\t%s\n", f.JobID, dashIfEmpty(f.TranscriptionID), a)
		}
	}
	switch {
	case n == 0 && len(out) == 0:
		fmt.Fprintln(w, "nothing to do: no job matches")
	case n == 0:
		fmt.Fprintf(w, "nothing to do: %d job(s) forgotten already\n", len(out))
	case dryRun:
		fmt.Fprintln(w, "dry run: nothing was changed")
	}
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
