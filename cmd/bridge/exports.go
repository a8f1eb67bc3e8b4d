package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

func exportByName(cfg *Config, name string) (*export.Config, error) {
	var names []string
	for i := range cfg.Exports {
		if cfg.Exports[i].Name == name {
			return &cfg.Exports[i], nil
		}
		names = append(names, cfg.Exports[i].Name)
	}
	return nil, unknownName("export", name, names)
}

func parseWhen(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, usageError("--%s %q: want 2006-01-02 or RFC 3339", flag, v)
}

// newExportCmd is export: run a configured export now, list runs. Both subcommands share one
// set of configuration flags.
func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Scheduled exports of completed transcripts: run one now, list runs"}
	var cf configFlags
	for _, c := range []*cobra.Command{newExportRunCmd(&cf), newExportListCmd(&cf)} {
		cf.register(c)
		cmd.AddCommand(c)
	}
	return cmd
}

// newExportRunCmd is export run: one export run now over --since..--until (or --dry-run to
// count). The caller registers cf.
func newExportRunCmd(cf *configFlags) *cobra.Command {
	var since, until string
	var dry bool
	run := &cobra.Command{
		Use:   "run NAME",
		Short: "Run an export now, from its checkpoint (or --since) to now (or --until)",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			c, err := exportByName(cfg, args[0])
			if err != nil {
				return err
			}
			from, err := parseWhen("since", since)
			if err != nil {
				return err
			}
			to, err := parseWhen("until", until)
			if err != nil {
				return err
			}
			client, stop, err := configuredClient(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stop()
			store, err := openStoreAt(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			ex := &export.Exporter{Store: store, API: client, Log: newLogger(cmd.ErrOrStderr()), Lease: cfg.Replica.Lease, Replica: cfg.Replica.Name}
			ex.Progress = progressBar(cmd.OutOrStdout(), c.Name)
			gone := &bridge.Pipeline{Store: store, Log: ex.Log}
			ex.Gone = func(ctx context.Context, id string) { // a download's 404 ends the job deleted
				if _, err := gone.GoneUpstream(ctx, id, "an export's download"); err != nil && ctx.Err() == nil {
					ex.Log.Warn("export: transcription deleted upstream", "transcription", id, "error", err)
				}
			}
			tick := time.Now().UTC() // a manual run is its own tick
			if to.IsZero() {
				to = time.Now().UTC()
			}
			m, err := ex.RunWindow(cmd.Context(), c, tick, export.Window{From: from, Until: to}, dry)
			if err != nil {
				return fmt.Errorf("export %s: %w", c.Name, err)
			}
			if dry {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d transcript(s) in %s..%s (dry run: nothing written)\n", c.Name, m.Counts.Listed,
					m.Window.From.Format(time.RFC3339), m.Window.Until.Format(time.RFC3339))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d exported, %d skipped, %d archive(s) in %s\n", c.Name, m.Counts.Exported, m.Counts.Skipped,
				len(m.Archives), m.Destination)
			return nil
		},
	}
	run.Flags().StringVar(&since, "since", "", "start of the window (default: the checkpoint)")
	run.Flags().StringVar(&until, "until", "", "end of the window (default: now)")
	run.Flags().BoolVar(&dry, "dry-run", false, "only count what would be exported")
	return run
}

// newExportListCmd is export list: the runs, of every export or of one. The caller registers
// cf.
func newExportListCmd(cf *configFlags) *cobra.Command {
	var format string
	list := &cobra.Command{
		Use:   "list [NAME]",
		Short: "Show runs: window, counts and status, newest first (of one export: a configured one, or one with runs)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, cfg, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			runs, err := store.Runs(cmd.Context(), name, 0)
			if err != nil {
				return err
			}
			var exports []string
			for _, e := range cfg.Exports {
				exports = append(exports, e.Name)
			}
			if err := checkKnown("export", name, exports, func() (bool, error) { return len(runs) > 0, nil }); err != nil {
				return err
			}
			now := time.Now()
			views := make([]exportRunView, 0, len(runs))
			for _, r := range runs {
				views = append(views, newExportRunView(r, now))
			}
			return printOutput(cmd.OutOrStdout(), format, listOf(views), func(w io.Writer) {
				fmt.Fprintln(w, "EXPORT\tTICK\tSTATUS\tFROM\tUNTIL\tLISTED\tEXPORTED\tSKIPPED\tLOCATION\tERROR")
				for _, r := range views {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Export, tableTime(r.Tick), r.Status,
						tableTime(r.From), tableTime(r.Until), r.Listed, r.Exported, r.Skipped, r.Location, oneLine(r.Error))
				}
			})
		},
	}
	addOutputFlag(list, &format, formatTable)
	return list
}

// exportRunView is an export run as export list prints it in JSON and YAML.
type exportRunView struct {
	// Export is the configured export's name.
	Export string `json:"export"`
	// Tick is the schedule time the run is for (a manual run is its own tick).
	Tick time.Time `json:"tick,omitzero"`
	// Status is running, completed or failed, or interrupted (running, but its runner is gone).
	Status string `json:"status"`
	// From is the start of the window of creation times the run covers.
	From time.Time `json:"from,omitzero"`
	// Until is the window's end (exclusive).
	Until time.Time `json:"until,omitzero"`
	// Location is where the run wrote (a folder, or s3://bucket/prefix).
	Location string `json:"location,omitempty"`
	// Listed counts the completed transcriptions found in the window.
	Listed int `json:"listed"`
	// Exported counts those written.
	Exported int `json:"exported"`
	// Skipped counts those the service no longer had (deleted in between).
	Skipped int `json:"skipped"`
	// Error is why a failed run failed.
	Error string `json:"error,omitempty"`
	// StartedAt is when the run started.
	StartedAt time.Time `json:"started_at,omitzero"`
	// FinishedAt is when it ended.
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// LeaseUntil is how long a running run is reserved for its runner.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// newExportRunView is r as printed at now.
func newExportRunView(r bridge.ExportRun, now time.Time) exportRunView {
	return exportRunView{Export: r.Export, Tick: utc(r.Tick), Status: string(r.State(now)), From: utc(r.From), Until: utc(r.Until),
		Location: r.Location, Listed: r.Listed, Exported: r.Exported, Skipped: r.Skipped, Error: api.Redact(r.Error),
		StartedAt: utc(r.StartedAt), FinishedAt: utc(r.FinishedAt), LeaseUntil: utc(r.LeaseUntil)}
}
