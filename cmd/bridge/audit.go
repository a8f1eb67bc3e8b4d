package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newAuditCmd is audit: what admins did by hand from the status page (bridge.AuditStore).
func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "The audit log: what admins did from the status page"}
	var cf configFlags
	var limit int
	var format string
	list := &cobra.Command{
		Use:   "list [--limit N]",
		Short: "One line per action, newest first: when, who, what, on which ids, and how it went",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageError("--limit %d: want 0 (all) or more", limit)
			}
			store, _, err := openStore(cmd, &cf)
			if err != nil {
				return err
			}
			defer store.Close()
			log, err := store.AuditLog(cmd.Context(), limit)
			if err != nil {
				return err
			}
			views := make([]auditView, 0, len(log))
			for _, e := range log {
				views = append(views, auditView{ID: e.ID, At: utc(e.At), Who: e.Who, Action: e.Action, Targets: e.Targets,
					Detail: e.Detail, Error: e.Error})
			}
			return printOutput(cmd.OutOrStdout(), format, listOf(views), func(w io.Writer) {
				fmt.Fprintln(w, "AT\tWHO\tACTION\tTARGETS\tDETAIL\tERROR")
				for _, v := range views {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", tableTime(v.At), v.Who, v.Action, oneLine(strings.Join(v.Targets, ",")),
						oneLine(v.Detail), oneLine(v.Error))
				}
			})
		},
	}
	cf.register(list)
	list.Flags().IntVar(&limit, "limit", 100, "the latest N entries (0: all)")
	addOutputFlag(list, &format, formatTable)
	cmd.AddCommand(list)
	return cmd
}

// auditView is an audit entry as audit list prints it in JSON and YAML.
type auditView struct {
	// ID orders the entries: a later one has a higher id.
	ID int64 `json:"id"`
	// At is when the action was taken.
	At time.Time `json:"at"`
	// Who took it: "admin session <tag> from <address>", or "admin from <address>" without a
	// token.
	Who string `json:"who"`
	// Action is release, reassign, replay, pause, resume, login or logout.
	Action string `json:"action"`
	// Targets are the ids acted on (jobs, deliveries, an endpoint).
	Targets []string `json:"targets"`
	// Detail says more: the author, the replay's filter.
	Detail string `json:"detail,omitempty"`
	// Error is why the action failed (left out when it succeeded).
	Error string `json:"error,omitempty"`
}
