package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/metrics"
)

// newRetentionCmd is retention: show what the next purge removes, or purge now.
func newRetentionCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "retention", Short: "What the bridge keeps past its retention: show it, or purge it now"}
	var sf, pf configFlags
	var format string
	show := &cobra.Command{
		Use:   "show",
		Short: "Print, per kind, the retention and how many rows are past it (and the oldest): what the next purge removes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, cfg, err := openStore(cmd, &sf)
			if err != nil {
				return err
			}
			defer store.Close()
			p, keep := newPurger(cfg, store, nil, slog.New(slog.DiscardHandler))
			next, err := p.Show(cmd.Context(), describeKeep(keep))
			if err != nil {
				return err
			}
			return printOutput(cmd.OutOrStdout(), format, listOf(next), func(w io.Writer) {
				fmt.Fprintln(w, "KIND\tKEEP\tPAST IT\tOLDEST")
				for _, n := range next {
					oldest := "-"
					if !n.Oldest.IsZero() {
						oldest = utc(n.Oldest).Format(time.RFC3339)
					}
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", n.Kind, n.Keep, n.Count, oldest)
				}
			})
		},
	}
	sf.register(show)
	addOutputFlag(show, &format, formatTable)
	purge := &cobra.Command{
		Use:   "purge",
		Short: "Purge now what is past its retention (bridge run does it on retention.schedule), and print what was removed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, cfg, err := openStore(cmd, &pf)
			if err != nil {
				return err
			}
			defer store.Close()
			p, _ := newPurger(cfg, store, nil, slog.New(slog.DiscardHandler))
			removed, err := p.Purge(cmd.Context())
			for _, kind := range append(append([]string(nil), bridge.RetentionKinds...), bridge.RetainExports) {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%d removed\n", kind, removed[kind])
			}
			return err
		},
	}
	pf.register(purge)
	cmd.AddCommand(show, purge)
	return cmd
}

// newPurger builds the purger of cfg's retention over store, counted by m (nil: not counted),
// and returns it with the exports' retention.
func newPurger(cfg *Config, store database, m bridge.PurgeMetrics, log *slog.Logger) (*bridge.Purger, export.Keep) {
	keep, _ := cfg.Retention.exportKeep() // checked by Validate
	p := &bridge.Purger{Store: store, Ages: cfg.Retention.ages(), Batch: cfg.Retention.Batch, Replica: cfg.Replica.Name,
		Lease: cfg.Replica.Lease, Metrics: m, Log: log}
	p.Archives = &bridge.Archives{
		Expired: func(ctx context.Context, now time.Time) (int, time.Time, error) {
			runs, err := export.Expired(ctx, store, keep, now)
			var oldest time.Time
			for _, r := range runs {
				if oldest.IsZero() || r.FinishedAt.Before(oldest) {
					oldest = r.FinishedAt
				}
			}
			return len(runs), oldest, err
		},
		Purge: func(ctx context.Context, now time.Time, limit int) (int, error) {
			return export.PurgeArchives(ctx, store, keep, now, limit)
		},
	}
	return p, keep
}

// startHousekeeping starts the exports (startExports) and the retention purge
// (startRetention); stop stops both.
func startHousekeeping(ctx context.Context, cfg *Config, store database, client *api.Client, tel *telemetry, p *bridge.Pipeline, log *slog.Logger) (stop func(), err error) {
	stopExports, err := startExports(ctx, cfg, store, client, tel.metrics, p, log)
	if err != nil {
		return nil, err
	}
	stopRetention, err := startRetention(ctx, cfg, store, tel.registry, log)
	if err != nil {
		stopExports()
		return nil, err
	}
	return func() {
		stopRetention()
		stopExports()
	}, nil
}

// startRetention schedules the purge on retention.schedule (one replica at a time purges: the
// others find the lease held), counted on reg as bridge_purged_total; stop waits for a running
// purge to end.
func startRetention(ctx context.Context, cfg *Config, store database, reg prometheus.Registerer, log *slog.Logger) (stop func(), err error) {
	m, err := metrics.NewPurged(reg)
	if err != nil {
		return nil, err
	}
	p, _ := newPurger(cfg, store, m, log)
	cl := bridge.CronLogger(log)
	c := cron.New(cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
	if _, err := c.AddFunc(cfg.Retention.Schedule, func() {
		if _, err := p.Purge(ctx); err != nil && ctx.Err() == nil {
			log.Error("retention purge", "error", err)
		}
	}); err != nil {
		return nil, usageError("retention.schedule: %q: %v", cfg.Retention.Schedule, err)
	}
	c.Start()
	return func() { <-c.Stop().Done() }, nil
}
