package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

func newJobsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "Inspect the bridge's jobs (one per source item and version)"}
	var cf configFlags
	var state, source string
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per job: id, source, item, state, reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := bridge.JobFilter{Source: source}
			if state != "" {
				for _, s := range strings.Split(state, ",") {
					st := bridge.State(s)
					if !st.Valid() {
						return usageError("--state %q: not one of %v", s, bridge.States)
					}
					f.States = append(f.States, st)
				}
			}
			store, _, err := openStore(cmd, &cf)
			if err != nil {
				return err
			}
			defer store.Close()
			jobs, err := store.Jobs(cmd.Context(), f)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSOURCE\tITEM\tSTATE\tREASON")
			for _, j := range jobs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.ID, j.Source, j.ItemID, j.State, oneLine(j.Reason))
			}
			return tw.Flush()
		},
	}
	cf.register(list)
	list.Flags().StringVar(&state, "state", "", "only jobs in these states (comma-separated)")
	list.Flags().StringVar(&source, "source", "", "only jobs of this source")
	var scf configFlags
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a job and its history",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := openStore(cmd, &scf)
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
			return printJSON(cmd.OutOrStdout(), map[string]any{"job": j, "history": h})
		},
	}
	scf.register(show)
	var rcf configFlags
	var author string
	release := &cobra.Command{
		Use:   "release ID --author email:…|user:…",
		Short: "Assign a held job's author by hand; it is mapped and uploaded on the next step",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := api.ValidateAuthor(author, true); err != nil {
				return usageError("--author %q: %v", author, err)
			}
			store, _, err := openStore(cmd, &rcf)
			if err != nil {
				return err
			}
			defer store.Close()
			j, err := loadJob(cmd, store, args[0])
			if err != nil {
				return err
			}
			if j.State != bridge.StateHeld {
				return &exitError{code: exitFailed, err: fmt.Errorf("job %s is %s, not held", j.ID, j.State)}
			}
			j.State, j.Author, j.NextAt, j.UpdatedAt = bridge.StateDiscovered, author, time.Time{}, time.Now().UTC()
			if err := store.Update(cmd.Context(), j, bridge.StateHeld, "released by hand: author "+author); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s released with author %s; bridge run uploads it\n", j.ID, author)
			return nil
		},
	}
	release.Flags().StringVar(&author, "author", "", "the member who owns the recording: email:<address> or user:<uuid>")
	release.MarkFlagRequired("author")
	rcf.register(release)
	cmd.AddCommand(list, show, release)
	return cmd
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// loadJob reads job id; an unknown id exits 1.
func loadJob(cmd *cobra.Command, store bridge.Store, id string) (*bridge.Job, error) {
	j, err := store.Job(cmd.Context(), id)
	if errors.Is(err, bridge.ErrNotFound) {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return j, err
}
