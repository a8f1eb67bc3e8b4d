// Package storecopy moves a bridge installation's state from one store to another (SQLite to
// PostgreSQL above all, but any direction): jobs with their revision and history, cursors, the
// outbox, deliveries and their attempts, disabled endpoints, export runs, exported ids and
// checkpoints, the mapping generation and meta (the instance id, which the bridge's uploads carry
// as bridge_instance). Leases are not moved (they run out), nor the bus's tables, whose schemas
// differ: the events the relay has not handed on yet are published again on the destination's
// bus, in the same transaction.
//
// A copy goes only into an empty database (migrated, never run), in one destination transaction
// that reads the source in one snapshot, table by table in primary-key order, streamed and
// written in batches; before it commits, it compares each table's row count and checksum on both
// sides, and rolls everything back when one differs.
package storecopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNotEmpty is matched (errors.Is) by the error of a copy into a database that already holds
// state; the error is a *NotEmptyError.
var ErrNotEmpty = errors.New("destination is not empty")

// ErrMismatch is wrapped by the error of a copy or Verify that found a table whose rows differ
// between the two databases.
var ErrMismatch = errors.New("checksums differ")

// NotEmptyError is a refused copy: the destination holds rows.
type NotEmptyError struct {
	// Database names the destination.
	Database string
	// Tables lists the tables holding rows, with their counts, in copy order.
	Tables []TableRows
}

// TableRows is a table and how many rows it holds.
type TableRows struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Rows is how many rows it holds.
	Rows int64 `json:"rows"`
}

// Error names the destination and what it holds, and says that nothing was copied.
func (e *NotEmptyError) Error() string {
	parts := make([]string, len(e.Tables))
	for i, t := range e.Tables {
		parts[i] = fmt.Sprintf("%s %d", t.Table, t.Rows)
	}
	return fmt.Sprintf("%s already holds state (%s): a copy goes only into an empty database, migrated and never run "+
		"(never merged); nothing was copied", e.Database, strings.Join(parts, ", "))
}

// Is makes errors.Is(err, ErrNotEmpty) true.
func (e *NotEmptyError) Is(target error) bool { return target == ErrNotEmpty }

// Options tune a copy; the zero value is fine.
type Options struct {
	// Batch is how many rows one INSERT carries (default 500; fewer for wide tables, so that
	// a statement stays under the databases' parameter limits).
	Batch int
	// Progress, when set, is called after each table is copied with its name and row count.
	Progress func(table string, rows int64)

	// afterCopy runs on the destination's transaction before the verification (tests tamper
	// with the copy there).
	afterCopy func(ctx context.Context, tx *sql.Tx) error
}

// maxParams bounds the parameters of one statement: SQLite allows 32766, PostgreSQL 65535.
const maxParams = 30000

// Copy copies from's state into to, which must be empty (see NotEmptyError), at the same schema
// version, in one transaction of to, and publishes the events not handed on yet on to's bus. It
// returns the verification report: per table, rows and checksum on both sides. It fails, and
// to is left as it was, when the two are the same database, their schema versions differ, to is
// not empty (ErrNotEmpty), a read or write fails, or a table differs after the copy
// (ErrMismatch: the report says which).
func Copy(ctx context.Context, from, to *Database, opt Options) (*Report, error) {
	if from.same(to) {
		return nil, fmt.Errorf("store copy: %s is both the source and the destination", from)
	}
	if err := sameSchema(ctx, from, to); err != nil {
		return nil, err
	}
	src, err := from.DB().BeginTx(ctx, from.dialect.snapshot())
	if err != nil {
		return nil, fmt.Errorf("store copy: read %s: %w", from, err)
	}
	defer src.Rollback()
	dst, err := to.DB().BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store copy: write %s: %w", to, err)
	}
	defer dst.Rollback()
	republished, err := copyAll(ctx, src, from, dst, to, opt)
	if err != nil {
		return nil, err
	}
	report, err := verify(ctx, src, from.dialect, dst, to.dialect)
	if err != nil {
		return nil, fmt.Errorf("store copy: verify: %w", err)
	}
	report.From, report.To, report.Republished = from.String(), to.String(), republished
	if bad := report.differing(); len(bad) > 0 {
		return report, fmt.Errorf("store copy: %w in %s: nothing was committed to %s", ErrMismatch, strings.Join(bad, ", "), to)
	}
	if err := dst.Commit(); err != nil {
		return nil, fmt.Errorf("store copy: commit %s: %w", to, err)
	}
	return report, nil
}

// copyAll refuses a destination that is not empty, then copies every table, moves to's
// sequences past what was copied and publishes the pending events on to's bus, on dst. It
// returns how many events it published.
func copyAll(ctx context.Context, src *sql.Tx, from *Database, dst *sql.Tx, to *Database, opt Options) (int, error) {
	held, err := contents(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("store copy: read %s: %w", to, err)
	}
	if len(held) > 0 {
		return 0, &NotEmptyError{Database: to.String(), Tables: held}
	}
	batch := opt.Batch
	if batch <= 0 {
		batch = 500
	}
	for _, t := range Tables {
		if t.seeded != "" {
			if _, err := dst.ExecContext(ctx, "DELETE FROM "+quote(t.name)); err != nil {
				return 0, fmt.Errorf("store copy: %s: clear the migrations' row: %w", t.name, err)
			}
		}
		n, err := copyTable(ctx, src, from.dialect, dst, to.dialect, t, batch)
		if err != nil {
			return 0, fmt.Errorf("store copy: %s: %w", t.name, err)
		}
		if opt.Progress != nil {
			opt.Progress(t.name, n)
		}
	}
	if to.dialect.postgres {
		if err := moveSequences(ctx, dst); err != nil {
			return 0, fmt.Errorf("store copy: %w", err)
		}
	}
	n, err := to.store.RepublishPending(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("store copy: %w", err)
	}
	if opt.afterCopy != nil {
		if err := opt.afterCopy(ctx, dst); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// sameSchema fails unless from and to are at the same schema version.
func sameSchema(ctx context.Context, from, to *Database) error {
	vf, err := from.store.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("store copy: %s: %w", from, err)
	}
	vt, err := to.store.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("store copy: %s: %w", to, err)
	}
	if vf != vt {
		return fmt.Errorf("store copy: schema versions differ: %s is at %d, %s at %d", from, vf, to, vt)
	}
	return nil
}

// snapshot returns the options of the source's transaction: one snapshot of the whole source.
// SQLite's transactions take the write lock (the store's BEGIN IMMEDIATE), which holds off any
// writer for the copy's length; PostgreSQL's is REPEATABLE READ, read only.
func (d dialect) snapshot() *sql.TxOptions {
	if d.postgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return nil
}

// same reports whether d and o are the same database: the same SQLite file or the same
// PostgreSQL server and database.
func (d *Database) same(o *Database) bool {
	if d.dialect != o.dialect {
		return false
	}
	if d.dialect.postgres {
		return d.where == o.where
	}
	a, errA := filepath.Abs(strings.TrimPrefix(d.where, "sqlite "))
	b, errB := filepath.Abs(strings.TrimPrefix(o.where, "sqlite "))
	return errA == nil && errB == nil && a == b
}

// contents lists the tables of q's database that hold rows, copied or not (seeded rows left
// out); none for an empty database.
func contents(ctx context.Context, q queryer) ([]TableRows, error) {
	names := make([]string, 0, len(Tables)+len(notCopied))
	where := map[string]string{}
	for _, t := range Tables {
		names = append(names, t.name)
		if t.seeded != "" {
			where[t.name] = " WHERE NOT (" + t.seeded + ")"
		}
	}
	names = append(names, notCopied...)
	var out []TableRows
	for _, name := range names {
		var n int64
		if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quote(name)+where[name]).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
		if n > 0 {
			out = append(out, TableRows{Table: name, Rows: n})
		}
	}
	return out, nil
}

// moveSequences sets the sequence of each identity column of PostgreSQL's tables past the
// largest value copied, so that the next row the store inserts takes the next number.
func moveSequences(ctx context.Context, tx *sql.Tx) error {
	for _, t := range Tables {
		if t.identity == "" {
			continue
		}
		q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE(MAX(%s), 0) + 1, false) FROM %s`,
			t.name, t.identity, quote(t.identity), quote(t.name))
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("move the sequence of %s.%s: %w", t.name, t.identity, err)
		}
	}
	return nil
}
