package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
)

// Commit implements bridge.DeliveryStore: releases, records, claims' searches and fan-outs of
// b in one transaction (one fsync for the lot), in that order, with a few statements for many
// rows; a claim's room left after its search takes the batch's new deliveries, leased as they
// are written (bridge.FanOutAll).
func (s *Store) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, d := range b.Releases {
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = 0, next_attempt_at = MIN(next_attempt_at, ?)
				WHERE id = ? AND lease_until = ?`, b.Now.UnixNano(), d.ID, nanos(d.LeaseUntil)); err != nil {
				return fmt.Errorf("release delivery %s: %w", d.ID, err)
			}
		}
		for _, chunk := range recordChunks(b.Records) {
			if err := recordAll(ctx, tx, chunk); err != nil {
				return err
			}
		}
		// The searches first: older work before the new (the batch's own events still count
		// as not fanned out, so their jobs' later deliveries wait), then the fan-outs, whose
		// new deliveries fill the room left.
		for i := range b.Claims {
			c := &b.Claims[i]
			c.Claimed = nil
			if c.FanOutsOnly {
				continue
			}
			var err error
			if c.Claimed, err = claim(ctx, tx, c.Endpoint, b.Now, c.Lease, c.Limit); err != nil {
				return fmt.Errorf("claim deliveries of %q: %w", c.Endpoint, err)
			}
		}
		for i := 0; i < len(b.FanOuts); i += rowsPerStatement {
			if err := bridge.FanOutAll(ctx, fanOutTx{tx}, b.FanOuts[i:min(i+rowsPerStatement, len(b.FanOuts))], b.Now, b.Claims); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit a delivery batch (%d records, %d events, %d claims): %w", len(b.Records), len(b.FanOuts), len(b.Claims), err)
	}
	return nil
}

// rowsPerStatement bounds a multi-row statement (at most 8 parameters a row: well under
// SQLite's limit on parameters).
const rowsPerStatement = 200

// recordChunks splits items into runs of at most rowsPerStatement, a new run starting at a
// delivery the run already names: one statement writes a delivery once, so a batch recording
// a delivery twice records each in turn, as two batches would.
func recordChunks(items []bridge.RecordItem) [][]bridge.RecordItem {
	var out [][]bridge.RecordItem
	seen := map[string]bool{}
	start := 0
	for i := range items {
		id := items[i].Delivery.ID
		if i-start == rowsPerStatement || seen[id] {
			out = append(out, items[start:i])
			start = i
			clear(seen)
		}
		seen[id] = true
	}
	if start < len(items) {
		out = append(out, items[start:])
	}
	return out
}

// recordAll is record for many items in two statements: one UPDATE … FROM (VALUES …) writes
// the states still under their claims (recordStates), one INSERT adds every attempt of a
// delivery that exists. An item whose state was not written is a conflict (its attempt kept)
// or an unknown delivery, told apart by one more query.
func recordAll(ctx context.Context, tx *sql.Tx, items []bridge.RecordItem) error {
	args := make([]any, 0, 8*len(items))
	for i := range items {
		d, a := items[i].Delivery, items[i].Attempt
		items[i].Err = nil
		args = append(args, d.ID, string(d.Status), d.Attempts, nanos(d.NextAttemptAt), a.Status, a.Error, a.At.UnixNano(), nanos(d.LeaseUntil))
	}
	written, err := recordStates(ctx, tx, len(items), args)
	if err != nil {
		return fmt.Errorf("record %d attempts: %w", len(items), err)
	}
	args = args[:0]
	n := 0
	for i := range items {
		d, a := items[i].Delivery, items[i].Attempt
		if written != nil && !written[d.ID] {
			var exists bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE id = ?)`, d.ID).Scan(&exists); err != nil {
				return fmt.Errorf("record an attempt of delivery %s: %w", d.ID, err)
			}
			if !exists {
				items[i].Err = fmt.Errorf("record an attempt of delivery %s: %w", d.ID, bridge.ErrDeliveryNotFound)
				continue
			}
			// The attempt happened and is kept; the newer claim decides the state.
			items[i].Err = fmt.Errorf("record delivery %s: claimed again since %v: %w", d.ID, d.LeaseUntil, bridge.ErrConflict)
		}
		args = append(args, d.ID, d.Endpoint, a.At.UnixNano(), a.Status, a.Latency, a.Response, a.Error)
		n++
	}
	if n == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, endpoint, at, status, latency_ms, response, error)
		VALUES `+placeholders(n, 7), args...); err != nil {
		return fmt.Errorf("record %d attempts: %w", n, err)
	}
	return nil
}

// recordStates runs the UPDATE of n items' states (args: 8 a row) and returns the ids it wrote,
// nil meaning all n. Reading every id back costs a row each, so the UPDATE first runs without:
// when it changes fewer rows than n (a conflict, an unknown delivery), it is undone to a
// savepoint and run again returning the ids.
func recordStates(ctx context.Context, tx *sql.Tx, n int, args []any) (map[string]bool, error) {
	update := `UPDATE deliveries AS d SET status = v.column2, attempts = v.column3,
		next_attempt_at = v.column4, lease_until = 0, last_status = v.column5, last_error = v.column6, updated_at = v.column7
		FROM (VALUES ` + placeholders(n, 8) + `) AS v
		WHERE d.id = v.column1 AND (v.column8 = 0 OR d.lease_until = v.column8)`
	if _, err := tx.ExecContext(ctx, `SAVEPOINT record_states`); err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, update, args...)
	if err != nil {
		return nil, err
	}
	if changed, err := res.RowsAffected(); err == nil && changed == int64(n) {
		_, err := tx.ExecContext(ctx, `RELEASE record_states`)
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO record_states; RELEASE record_states`); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, update+` RETURNING id`, args...)
	if err != nil {
		return nil, err
	}
	written := make(map[string]bool, n)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		written[id] = true
	}
	return written, errors.Join(rows.Err(), rows.Close())
}

// placeholders returns rows groups of cols "?" each: "(?,?),(?,?)".
func placeholders(rows, cols int) string {
	row := "(" + marks(cols) + ")"
	return strings.TrimSuffix(strings.Repeat(row+",", rows), ",")
}

// marks returns n "?" separated by commas, for an IN list: "?,?,?".
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
