package main

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
)

// sourceByName builds the configured source called name (usage error when there is none).
func sourceByName(cfg *Config, name string) (connectors.Source, *SourceConfig, error) {
	for i := range cfg.Sources {
		s := &cfg.Sources[i]
		if s.Name != name {
			continue
		}
		src, err := connectors.New(s.Type, s.Name, s.Options)
		if err != nil {
			return nil, nil, cfg.sourceError(i, err)
		}
		return src, s, nil
	}
	var names []string
	for _, s := range cfg.Sources {
		names = append(names, s.Name)
	}
	return nil, nil, unknownName("source", name, names)
}

// newSourcesCmd is sources: check a source, list what it would sync, backfill its history.
// The subcommands share one set of configuration flags.
func newSourcesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "sources", Short: "Check a source's access, or see what it would sync"}
	var cf configFlags
	for _, c := range []*cobra.Command{newSourcesCheckCmd(&cf), newSourcesListCmd(&cf), newSourcesBackfillCmd(&cf)} {
		cf.register(c)
		cmd.AddCommand(c)
	}
	return cmd
}

// newSourcesCheckCmd is sources check: the source's credentials and access verified. The
// caller registers cf.
func newSourcesCheckCmd(cf *configFlags) *cobra.Command {
	check := &cobra.Command{
		Use:   "check NAME",
		Short: "Verify the source's credentials and access; says what is missing (exit 1)",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			src, _, err := sourceByName(cfg, args[0])
			if err != nil {
				return err
			}
			checker, ok := src.(connectors.Checker)
			if !ok {
				return fmt.Errorf("source %s: its type has no check; try bridge sources list %s", args[0], args[0])
			}
			lines, err := checker.Check(cmd.Context())
			for _, l := range lines {
				fmt.Fprintln(cmd.OutOrStdout(), "ok:", l)
			}
			if err != nil {
				return fmt.Errorf("source %s: %w", args[0], err)
			}
			return nil
		},
	}
	return check
}

// newSourcesListCmd is sources list: a dry run of what the source would sync, with the
// external ids its mapping gives. The caller registers cf.
func newSourcesListCmd(cf *configFlags) *cobra.Command {
	var limit int
	var format string
	list := &cobra.Command{
		Use:   "list NAME",
		Short: "Show what the source would sync (a dry run: nothing is stored or uploaded)",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			src, sc, err := sourceByName(cfg, args[0])
			if err != nil {
				return err
			}
			rules := mappingRules(*sc, nil)
			rules.Resolve = nil // a dry run shows ids, not owners: no member list is read
			m, err := mapping.New(sc.Name, sc.Type, "dry-run", rules)
			if err != nil {
				return usageError("source %s: %v", sc.Name, err)
			}
			recs, _, err := src.List(cmd.Context(), "")
			if err != nil {
				return fmt.Errorf("source %s: %w", sc.Name, err)
			}
			out := recordingList{Items: []recordingView{}, Total: len(recs)}
			for i, r := range recs {
				if limit > 0 && i == limit {
					break
				}
				v := recordingView{ItemID: r.ItemID, Version: r.Version, Name: r.Name, Size: r.Size, ModTime: utc(r.ModTime),
					Link: r.Link, Owner: newOwnerView(r.Owner)}
				if reason := bridge.Precheck(r); reason != "" {
					v.SkipReason = reason // as bridge run would skip it, before mapping
				} else if mapped, err := m.Map(cmd.Context(), mapping.Input{Recording: r, JobID: "dry-run"}); err != nil {
					v.SkipReason = api.Redact(err.Error())
				} else {
					v.ExternalID = mapped.ExternalID
				}
				out.Items = append(out.Items, v)
			}
			return printOutput(cmd.OutOrStdout(), format, out, out.table)
		},
	}
	addOutputFlag(list, &format, formatTable)
	list.Flags().IntVar(&limit, "limit", 0, "show at most this many (0: all)")
	return list
}

// newSourcesBackfillCmd is sources backfill: the source's history walked from --from and
// queued. The caller registers cf.
func newSourcesBackfillCmd(cf *configFlags) *cobra.Command {
	var from string
	backfill := &cobra.Command{
		Use:   "backfill NAME --from DATE",
		Short: "Walk the source's history from DATE (YYYY-MM-DD) and queue what it finds; bridge run uploads it",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			since, err := time.Parse("2006-01-02", from)
			if err != nil {
				return usageError("--from %q: want a date like 2026-01-31", from)
			}
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			src, _, err := sourceByName(cfg, args[0]) // an unknown name creates nothing
			if err != nil {
				return err
			}
			store, err := openStoreAt(cmd.Context(), cfg) // queues jobs: creates the database on a fresh install
			if err != nil {
				return err
			}
			defer store.Close()
			bf, ok := src.(connectors.Backfiller)
			if !ok {
				return usageError("source %s: its type lists everything on each scan; there is no history to walk", args[0])
			}
			if l, ok := src.(interface{ SetLogger(*slog.Logger) }); ok { // what the source cannot walk, on stderr
				l.SetLogger(newLogger(cmd.ErrOrStderr()))
			}
			progress := progressBar(cmd.OutOrStdout(), args[0])
			recs, walkErr := bf.Backfill(cmd.Context(), since, progress)
			if walkErr != nil && len(recs) == 0 {
				return fmt.Errorf("backfill %s: %w", args[0], walkErr)
			}
			// What a walk stopped part way found is kept all the same.
			p := &bridge.Pipeline{Store: store}
			n, err := p.Intake(cmd.Context(), args[0], recs)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d recording(s) since %s, %d new; bridge run uploads them\n", args[0], len(recs), from, n)
			if walkErr != nil {
				return fmt.Errorf("backfill %s: stopped part way (what it found is kept): %w", args[0], walkErr)
			}
			return nil
		},
	}
	backfill.Flags().StringVar(&from, "from", "", "first day to walk (YYYY-MM-DD)")
	backfill.MarkFlagRequired("from")
	return backfill
}

// recordingList is what sources list prints in JSON and YAML: the recordings shown (at most
// --limit) and how many the source lists.
type recordingList struct {
	// Items holds one object per recording shown.
	Items []recordingView `json:"items"`
	// Total counts every recording the source lists, shown or not.
	Total int `json:"total"`
}

// recordingView is one recording a source would sync.
type recordingView struct {
	// ItemID identifies the recording within its source.
	ItemID string `json:"item_id"`
	// Version is the item's version (each version becomes its own job).
	Version string `json:"version"`
	// Name is the file name that would be sent.
	Name string `json:"name"`
	// Size is the byte count (0 when the source does not know it before download).
	Size int64 `json:"size"`
	// ModTime is when the item last changed at the source.
	ModTime time.Time `json:"mod_time,omitzero"`
	// Link points to the item at its source.
	Link string `json:"link,omitempty"`
	// Owner is the external user who owns the item, when the source says.
	Owner *ownerView `json:"owner,omitempty"`
	// ExternalID is the X-External-Id it would be uploaded with.
	ExternalID string `json:"external_id,omitempty"`
	// SkipReason says why it would be skipped instead: its name or size (unsupported format,
	// too small, too large), or its external id or metadata breaking the service's rules.
	SkipReason string `json:"skip_reason,omitempty"`
}

// table prints one line per recording, then the count.
func (l recordingList) table(w io.Writer) {
	fmt.Fprintln(w, "ITEM\tNAME\tSIZE\tOWNER\tEXTERNAL ID")
	for _, r := range l.Items {
		owner := ""
		if r.Owner != nil {
			owner = r.Owner.Email
			if owner == "" {
				owner = r.Owner.ID
			}
		}
		ext := r.ExternalID
		if r.SkipReason != "" {
			ext = "(skipped: " + r.SkipReason + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.ItemID, r.Name, strconv.FormatInt(r.Size, 10), owner, ext)
	}
	fmt.Fprintf(w, "%d recording(s)\n", l.Total)
}
