package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// openStore loads the configuration and opens its existing store, for the commands that read
// or act on what is stored: it never creates a database (see openExistingStore).
func openStore(cmd *cobra.Command, cf *configFlags) (*sqlite.Store, *Config, error) {
	cfg, err := cf.load()
	if err != nil {
		return nil, nil, err
	}
	store, err := openExistingStore(cmd.Context(), cfg)
	if err != nil {
		return nil, nil, err
	}
	return store, cfg, nil
}

// openExistingStore opens the configured store only if its database exists: a read-only
// command run from the wrong directory says where it looked instead of creating an empty
// database there.
func openExistingStore(ctx context.Context, cfg *Config) (*sqlite.Store, error) {
	if _, err := os.Stat(cfg.Store.DSN); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no database at %s (set store.dsn or --config)", cfg.Store.DSN)
	}
	return openStoreAt(ctx, cfg)
}

// openStoreAt opens the configured store, creating the database when it does not exist yet
// (for the commands that write: run, export run, sources backfill, identities apply).
func openStoreAt(ctx context.Context, cfg *Config) (*sqlite.Store, error) {
	store, err := sqlite.Open(ctx, cfg.Store.DSN)
	if err != nil {
		return nil, fmt.Errorf("store.dsn: %w", err)
	}
	return store, nil
}

func newDeliveriesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "deliveries", Short: "Webhook deliveries: list, show attempts, replay"}
	var lf configFlags
	var endpoint, status string
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per delivery, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, _, err := openStore(cmd, &lf)
			if err != nil {
				return err
			}
			defer store.Close()
			ds, err := store.Deliveries(cmd.Context(), relay.DeliveryFilter{Endpoint: endpoint, Status: status, Limit: 1000})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tENDPOINT\tTYPE\tSTATUS\tATTEMPTS\tLAST\tNEXT")
			for _, d := range ds {
				next := "-"
				if d.Status == relay.StatusPending {
					next = d.NextAttemptAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", d.ID, d.Endpoint, d.Type, d.Status, d.Attempts, d.LastStatus, next)
			}
			return tw.Flush()
		},
	}
	lf.register(list)
	list.Flags().StringVar(&endpoint, "endpoint", "", "only this endpoint")
	list.Flags().StringVar(&status, "status", "", "pending, delivered or dead")

	var sf configFlags
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a delivery and its attempts",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := openStore(cmd, &sf)
			if err != nil {
				return err
			}
			defer store.Close()
			d, attempts, err := store.Delivery(cmd.Context(), args[0])
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			return printJSON(cmd.OutOrStdout(), map[string]any{"delivery": d, "attempts": attempts})
		},
	}
	sf.register(show)

	var rf configFlags
	var rEndpoint, since, until string
	var dead bool
	replay := &cobra.Command{
		Use:   "replay [ID...] [--endpoint E --since T --until T --dead]",
		Short: "Send deliveries again (same webhook-id): by id, or by endpoint and time range",
		RunE: func(cmd *cobra.Command, args []string) error {
			f := relay.DeliveryFilter{Endpoint: rEndpoint}
			if dead {
				f.Status = relay.StatusDead
			}
			for _, t := range []struct {
				flag, val string
				dst       *time.Time
			}{{"--since", since, &f.Since}, {"--until", until, &f.Until}} {
				if t.val == "" {
					continue
				}
				v, err := time.Parse(time.RFC3339, t.val)
				if err != nil {
					return usageError("%s %q: want an RFC 3339 time like 2026-11-22T00:00:00Z", t.flag, t.val)
				}
				*t.dst = v
			}
			if len(args) == 0 && f.Endpoint == "" && f.Since.IsZero() && !dead {
				return usageError("name deliveries: IDs, or --endpoint/--since/--until/--dead")
			}
			store, _, err := openStore(cmd, &rf)
			if err != nil {
				return err
			}
			defer store.Close()
			n, err := store.Replay(cmd.Context(), args, f, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d deliveries will be sent again by the running bridge\n", n)
			return nil
		},
	}
	rf.register(replay)
	replay.Flags().StringVar(&rEndpoint, "endpoint", "", "deliveries to this endpoint")
	replay.Flags().StringVar(&since, "since", "", "created at or after (RFC 3339)")
	replay.Flags().StringVar(&until, "until", "", "created before (RFC 3339)")
	replay.Flags().BoolVar(&dead, "dead", false, "only dead letters")
	cmd.AddCommand(list, show, replay)
	return cmd
}

// newEndpointsEnableCmd turns an endpoint disabled by a 410 back on.
func newEndpointsEnableCmd() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "enable NAME",
		Short: "Turn on an endpoint disabled after answering 410; its pending deliveries resume",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := openStore(cmd, &cf)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.EnableEndpoint(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "endpoint %s enabled\n", args[0])
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
