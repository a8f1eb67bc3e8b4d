package main

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge/storecopy"
)

// newStoreCmd is the store group: store copy.
func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Move the bridge's state from one store to another"}
	cmd.AddCommand(newStoreCopyCmd())
	return cmd
}

// newStoreCopyCmd is store copy: the whole state of one store into an empty one, verified.
func newStoreCopyCmd() *cobra.Command {
	var from, to, format string
	var batch int
	cmd := &cobra.Command{
		Use:   "copy --from DSN --to DSN",
		Short: "Copy a store's whole state into an empty store (SQLite to PostgreSQL), and verify it",
		Long: `Copies everything a bridge keeps from one store into another, typically from the embedded
SQLite file to PostgreSQL before scaling out: jobs (with their revision) and their history,
cursors, the outbox, webhook deliveries and their attempts, disabled endpoints, export runs,
exported ids and checkpoints, the mapping generation, and the instance id (the bridge finds its
uploads by it: bridge_instance). Leases are not copied; events not yet handed on to the relay are
published again on the destination's bus.

A DSN is sqlite:PATH (or a plain path) or postgres://user@host:port/db; keep the password out of
the command line with PGPASSWORD or ~/.pgpass (a password in the URL is never printed). Both
stores are migrated to this bridge's schema first. The destination must be empty: a database
just created (bridge migrate on it is fine) and never run; one holding anything is refused,
never merged.

Stop the bridge first. The source is read in one snapshot and the destination written in one
transaction; before it commits, every table's rows and checksum (SHA-256 of its rows in key
order) are compared on both sides, and any difference rolls the whole copy back. Then point
store.driver and store.dsn at the destination and start the bridge there, and never start the
old store again: both would upload the same recordings.

Exit codes: 0 copied and verified; 1 refused, failed or not verified (nothing was written);
2 a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if batch < 1 {
				return usageError("--batch %d: must be at least 1", batch)
			}
			for _, f := range []struct{ flag, dsn string }{{"--from", from}, {"--to", to}} {
				if _, _, err := storecopy.ParseDSN(f.dsn); err != nil {
					return usageError("%s: %v", f.flag, err)
				}
			}
			return storeCopy(cmd, from, to, format, batch)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy: sqlite:PATH (or a path) or postgres://…")
	cmd.Flags().StringVar(&to, "to", "", "the empty store to copy into: sqlite:PATH (or a path) or postgres://…")
	cmd.Flags().IntVar(&batch, "batch", 500, "rows per INSERT")
	cmd.MarkFlagRequired("from")
	cmd.MarkFlagRequired("to")
	addOutputFlag(cmd, &format, formatTable)
	return cmd
}

// storeCopy opens both stores, copies and prints the verification; a copy that does not verify
// prints it too, and fails.
func storeCopy(cmd *cobra.Command, from, to, format string, batch int) error {
	ctx := cmd.Context()
	log := newLogger(cmd.ErrOrStderr())
	src, err := storecopy.Open(ctx, from, true)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	dst, err := storecopy.Open(ctx, to, false)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dst.Close()
	log.Info("copying the store", "from", src.String(), "to", dst.String())
	warnRunning(cmd, log, src)
	report, err := storecopy.Copy(ctx, src, dst, storecopy.Options{Batch: batch, Progress: func(table string, rows int64) {
		log.Info("copied", "table", table, "rows", rows)
	}})
	if report != nil {
		if perr := printOutput(cmd.OutOrStdout(), format, report, func(w io.Writer) { printCopyReport(w, report) }); perr != nil {
			return perr
		}
	}
	return err
}

// warnRunning warns when the source has leases that have not run out: a bridge may still be
// running on it, and what it writes after the copy's snapshot is not copied.
func warnRunning(cmd *cobra.Command, log *slog.Logger, src *storecopy.Database) {
	leases, err := src.Store().Leases(cmd.Context())
	if err != nil {
		log.Warn("cannot read the source's leases", "error", err)
		return
	}
	for _, l := range leases {
		if l.Until.After(time.Now()) {
			log.Warn("a bridge may still be running on the source: stop it first, or what it writes after the copy is lost",
				"lease", l.Name, "holder", l.Holder, "until", l.Until.Format(time.RFC3339))
		}
	}
}

// printCopyReport writes the verification as a table, one line per table, and what was done.
func printCopyReport(w io.Writer, r *storecopy.Report) {
	fmt.Fprintln(w, "TABLE\tROWS\tCHECKSUM\tOK")
	var rows int64
	for _, c := range r.Tables {
		ok := "ok"
		if !c.OK {
			ok = fmt.Sprintf("DIFFERS: the destination has %d rows, checksum %s", c.DestinationRows, short(c.DestinationChecksum))
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", c.Table, c.Rows, short(c.Checksum), ok)
		rows += c.Rows
	}
	if !r.OK() {
		fmt.Fprintf(w, "%s was left as it was: the copy did not verify\n", r.To)
		return
	}
	fmt.Fprintf(w, "copied %s rows from %s to %s; %d pending events published again on its bus\n",
		strconv.FormatInt(rows, 10), r.From, r.To, r.Republished)
}

// short is the beginning of a checksum, enough to compare by eye.
func short(sum string) string { return sum[:min(len(sum), 16)] }
