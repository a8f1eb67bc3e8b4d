package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/transcript-bridge/bridge/bridge"
)

// recordAll is record for a batch's items in three statements, whatever their number: one
// SELECT … FOR UPDATE locks the deliveries (in id order, as concurrent batches take them) and
// reads their leases, one INSERT adds the attempts of the deliveries that exist, in the items'
// order, and one UPDATE … FROM unnest writes the states still under their claims. An item's
// outcome (ErrDeliveryNotFound, ErrConflict) is set in its Err, as record returns it; the error
// returned is the transaction's. A batch that names a delivery twice is recorded item by item
// (record): each item in turn, as two batches would.
func recordAll(ctx context.Context, tx *sql.Tx, items []bridge.RecordItem) error {
	ids := make([]string, len(items))
	seen := make(map[string]bool, len(items))
	for i := range items {
		ids[i] = items[i].Delivery.ID
		if seen[ids[i]] {
			return recordEach(ctx, tx, items)
		}
		seen[ids[i]] = true
	}
	leases := make(map[string]int64, len(items))
	rows, err := tx.QueryContext(ctx, `SELECT id, lease_until FROM deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	if err != nil {
		return fmt.Errorf("record %d attempts: %w", len(items), err)
	}
	for rows.Next() {
		var id string
		var lease int64
		if err := rows.Scan(&id, &lease); err != nil {
			rows.Close()
			return fmt.Errorf("record %d attempts: %w", len(items), err)
		}
		leases[id] = lease
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("record %d attempts: %w", len(items), err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("record %d attempts: %w", len(items), err)
	}
	var a attemptCols
	var s stateCols
	for i := range items {
		it := &items[i]
		d := it.Delivery
		lease, ok := leases[d.ID]
		switch {
		case !ok:
			it.Err = fmt.Errorf("record an attempt of delivery %s: %w", d.ID, bridge.ErrDeliveryNotFound)
			continue
		case !d.LeaseUntil.IsZero() && lease != d.LeaseUntil.UnixNano():
			// The attempt happened and is kept; the newer claim decides the state.
			it.Err = fmt.Errorf("record delivery %s: claimed again since %v: %w", d.ID, d.LeaseUntil, bridge.ErrConflict)
		default:
			it.Err = nil
			s.add(d, it.Attempt)
		}
		a.add(d, it.Attempt)
	}
	if len(a.ids) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, endpoint, at, status, latency_ms, response, error)
			SELECT id, endpoint, at, status, latency, response, error
			FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[], $6::text[], $7::text[]) WITH ORDINALITY
				AS v(id, endpoint, at, status, latency, response, error, n)
			ORDER BY n`, a.ids, a.endpoints, a.at, a.status, a.latency, a.response, a.error); err != nil {
			return fmt.Errorf("record %d attempts: %w", len(a.ids), err)
		}
	}
	if len(s.ids) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries d SET status = v.status, attempts = v.attempts,
			next_attempt_at = v.next, lease_until = 0, last_status = v.last_status, last_error = v.last_error, updated_at = v.at
			FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[])
				AS v(id, status, attempts, next, last_status, last_error, at)
			WHERE d.id = v.id`, s.ids, s.status, s.attempts, s.next, s.lastStatus, s.lastError, s.at); err != nil {
			return fmt.Errorf("record %d deliveries' states: %w", len(s.ids), err)
		}
	}
	return nil
}

// recordEach is recordAll one item at a time.
func recordEach(ctx context.Context, tx *sql.Tx, items []bridge.RecordItem) error {
	for i := range items {
		var err error
		if items[i].Err, err = record(ctx, tx, items[i].Delivery, items[i].Attempt); err != nil {
			return err
		}
	}
	return nil
}

// attemptCols are delivery_attempts rows as columns, for unnest.
type attemptCols struct {
	ids, endpoints, response, error []string
	at, status                      []int64 // status as int8: the INSERT's cast to INTEGER checks its range
	latency                         []float64
}

func (c *attemptCols) add(d *bridge.Delivery, a bridge.Attempt) {
	c.ids, c.endpoints = append(c.ids, d.ID), append(c.endpoints, d.Endpoint)
	c.at, c.status = append(c.at, a.At.UnixNano()), append(c.status, int64(a.Status))
	c.latency, c.response, c.error = append(c.latency, a.Latency), append(c.response, a.Response), append(c.error, a.Error)
}

// stateCols are deliveries' new states as columns, for unnest.
type stateCols struct {
	ids, status, lastError []string
	attempts, lastStatus   []int64 // as int8: the UPDATE's cast to INTEGER checks their range
	next, at               []int64
}

func (c *stateCols) add(d *bridge.Delivery, a bridge.Attempt) {
	c.ids, c.status, c.attempts = append(c.ids, d.ID), append(c.status, string(d.Status)), append(c.attempts, int64(d.Attempts))
	c.next, c.lastStatus = append(c.next, nanos(d.NextAttemptAt)), append(c.lastStatus, int64(a.Status))
	c.lastError, c.at = append(c.lastError, a.Error), append(c.at, a.At.UnixNano())
}
