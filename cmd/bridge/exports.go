package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
	return nil, usageError("no export named %q (configured: %v)", name, names)
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

func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Scheduled exports of completed transcripts: run one now, list runs"}
	var cf configFlags
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
			client, err := configuredClient(cfg)
			if err != nil {
				return err
			}
			store, err := openStoreAt(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			ex := &export.Exporter{Store: store, API: client, Log: newLogger(cmd.ErrOrStderr())}
			ex.Progress = progressBar(cmd.OutOrStdout(), c.Name)
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
	list := &cobra.Command{
		Use:   "list [NAME]",
		Short: "Show runs: window, counts and status, newest first",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := openStore(cmd, &cf)
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
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "EXPORT\tTICK\tSTATUS\tFROM\tUNTIL\tLISTED\tEXPORTED\tSKIPPED\tLOCATION\tERROR")
			now := time.Now()
			for _, r := range runs {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Export, r.Tick.Format(time.RFC3339), r.State(now),
					r.From.Format(time.RFC3339), r.Until.Format(time.RFC3339), r.Listed, r.Exported, r.Skipped, r.Location, r.Error)
			}
			return w.Flush()
		},
	}
	for _, c := range []*cobra.Command{run, list} {
		cf.register(c)
		cmd.AddCommand(c)
	}
	return cmd
}
