package storecopy

import (
	"context"
	"database/sql"
	"fmt"
)

// queryer reads: a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// row holds one row of a table as it is scanned: a sql.Null* per column, by kind, so that both
// databases give the same Go values for the same stored ones.
type row struct {
	targets []any
}

// newRow returns a row to scan t's columns into.
func newRow(t Table) row {
	r := row{targets: make([]any, len(t.cols))}
	for i, c := range t.cols {
		switch c.kind {
		case textCol:
			r.targets[i] = new(sql.NullString)
		case realCol:
			r.targets[i] = new(sql.NullFloat64)
		default:
			r.targets[i] = new(sql.NullInt64)
		}
	}
	return r
}

// values appends the scanned values to args, as statement parameters (NULL stays NULL).
func (r row) values(args []any) []any {
	for _, t := range r.targets {
		switch v := t.(type) {
		case *sql.NullString:
			args = append(args, *v)
		case *sql.NullFloat64:
			args = append(args, *v)
		case *sql.NullInt64:
			args = append(args, *v)
		}
	}
	return args
}

// eachRow runs fn on every row of t in q's database, in key order, one row at a time (the rows
// are streamed, never all held). fn must not keep r's targets.
func eachRow(ctx context.Context, q queryer, d dialect, t Table, fn func(r row) error) error {
	rows, err := q.QueryContext(ctx, d.selectAll(t))
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	defer rows.Close()
	r := newRow(t)
	for rows.Next() {
		if err := rows.Scan(r.targets...); err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

// copyTable copies every row of t from src to dst in key order, batch rows per INSERT, and
// returns how many it copied.
func copyTable(ctx context.Context, src queryer, from dialect, dst *sql.Tx, to dialect, t Table, batch int) (int64, error) {
	per := max(1, min(batch, maxParams/len(t.cols)))
	full, err := dst.PrepareContext(ctx, to.insert(t, per))
	if err != nil {
		return 0, fmt.Errorf("prepare the insert: %w", err)
	}
	defer full.Close()
	var n int64
	args := make([]any, 0, per*len(t.cols))
	flush := func() error {
		rows := len(args) / len(t.cols)
		var err error
		if rows == per {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = dst.ExecContext(ctx, to.insert(t, rows), args...)
		}
		if err != nil {
			return fmt.Errorf("write rows %d to %d: %w", n+1, n+int64(rows), err)
		}
		n += int64(rows)
		args = args[:0]
		return nil
	}
	err = eachRow(ctx, src, from, t, func(r row) error {
		args = r.values(args)
		if len(args) == cap(args) {
			return flush()
		}
		return nil
	})
	if err == nil && len(args) > 0 {
		err = flush()
	}
	return n, err
}
