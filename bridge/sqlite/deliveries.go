package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var _ bridge.DeliveryStore = (*Store)(nil)

// deliveryCols are a delivery's columns, read from "deliveries d". A delivery fanned out since
// migration 0009 keeps no copy of its event's data (its row stays small: a tenth of the writes
// at ten endpoints); the data is read from the outbox.
const deliveryCols = `d.id, d.event_id, d.endpoint, d.webhook_id, d.type, d.job_id, d.transcription_id,
	CASE WHEN d.data = '' THEN COALESCE((SELECT o.data FROM outbox o WHERE o.id = d.event_id), '') ELSE d.data END,
	d.event_at, d.status, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, d.updated_at`

func scanDelivery(row interface{ Scan(...any) error }) (*bridge.Delivery, error) {
	var d bridge.Delivery
	var data string
	var eventAt, next, created, updated int64
	if err := row.Scan(&d.ID, &d.EventID, &d.Endpoint, &d.WebhookID, &d.Type, &d.JobID, &d.TranscriptionID, &data, &eventAt,
		&d.Status, &d.Attempts, &next, &d.LastStatus, &d.LastError, &created, &updated); err != nil {
		return nil, err
	}
	d.Data = json.RawMessage(data)
	d.EventAt, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromNanos(eventAt), fromNanos(next), fromNanos(created), fromNanos(updated)
	return &d, nil
}

// FanOut implements bridge.DeliveryStore.
func (s *Store) FanOut(ctx context.Context, ref bridge.EventRef, endpoints []string, now time.Time) error {
	items := []bridge.FanOutItem{{Ref: ref, Endpoints: endpoints}}
	if err := s.tx(ctx, func(tx *sql.Tx) error { return bridge.FanOutAll(ctx, fanOutTx{tx}, items, now, nil) }); err != nil {
		return err
	}
	return items[0].Err
}

// Claim implements bridge.DeliveryStore.
func (s *Store) Claim(ctx context.Context, endpoint string, now time.Time, lease time.Duration, limit int) ([]bridge.Delivery, error) {
	var out []bridge.Delivery
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = claim(ctx, tx, endpoint, now, lease, limit)
		return err
	})
	return out, err
}

// claim is Claim inside tx. A delivery waits for the earlier pending deliveries of its job at
// its endpoint and for the earlier events of its job not yet fanned out (the relay fans out in
// batches, which may commit out of event order).
func claim(ctx context.Context, tx *sql.Tx, endpoint string, now time.Time, lease time.Duration, limit int) ([]bridge.Delivery, error) {
	which, args := "", []any{now.UnixNano(), now.UnixNano()}
	if endpoint != "" {
		// A paused endpoint first: the search below would walk its whole backlog, every
		// delivery refused one by one, at every commit that fans out to it.
		var paused bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM endpoint_state WHERE name = ?)`, endpoint).Scan(&paused); err != nil || paused {
			return nil, err
		}
		which, args = "AND d.endpoint = ?", append(args, endpoint)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d
		WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.lease_until <= ? `+which+`
		AND d.endpoint NOT IN (SELECT name FROM endpoint_state)
		AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.endpoint = d.endpoint AND e.job_id = d.job_id
			AND e.status = 'pending' AND e.event_id < d.event_id)
		AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = d.job_id AND o.id < d.event_id AND o.delivered_at IS NULL)
		ORDER BY d.next_attempt_at, d.event_id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	var out []bridge.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, *d)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	until := now.Add(lease)
	args = []any{until.UnixNano()}
	for i := range out {
		out[i].LeaseUntil = until.UTC()
		args = append(args, out[i].ID)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = ? WHERE id IN (`+
		marks(len(out))+`)`, args...); err != nil {
		return nil, err
	}
	return out, nil
}

// Abandon implements bridge.DeliveryStore.
func (s *Store) Abandon(ctx context.Context, known []string, now time.Time) (int, error) {
	q := `UPDATE deliveries SET status = 'dead', last_error = 'the endpoint is no longer configured', updated_at = ?
		WHERE status = 'pending'`
	args := []any{now.UnixNano()}
	if len(known) > 0 {
		q += " AND endpoint NOT IN (" + marks(len(known)) + ")"
		for _, k := range known {
			args = append(args, k)
		}
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Record implements bridge.DeliveryStore.
func (s *Store) Record(ctx context.Context, d *bridge.Delivery, a bridge.Attempt) error {
	items := []bridge.RecordItem{{Delivery: d, Attempt: a}}
	if err := s.tx(ctx, func(tx *sql.Tx) error { return recordAll(ctx, tx, items) }); err != nil {
		return err
	}
	return items[0].Err
}

func deliveryWhere(f bridge.DeliveryFilter) (string, []any) {
	var where []string
	var args []any
	if f.Endpoint != "" {
		where, args = append(where, "endpoint = ?"), append(args, f.Endpoint)
	}
	switch {
	case slices.Contains(bridge.DeliveryStatuses, f.Status):
		// Written out, so the planner can use the partial indexes of one status
		// (deliveries_dead, deliveries_claim), which a parameter cannot match.
		where = append(where, "status = '"+string(f.Status)+"'")
	case f.Status != "":
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.Missed {
		where = append(where, "status <> '"+string(bridge.DeliveryDelivered)+"'")
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, f.Until.UnixNano())
	}
	if len(where) == 0 {
		return "1 = 1", nil
	}
	return strings.Join(where, " AND "), args
}

// Deliveries implements bridge.DeliveryStore.
func (s *Store) Deliveries(ctx context.Context, f bridge.DeliveryFilter) ([]bridge.Delivery, error) {
	where, args := deliveryWhere(f)
	q := `SELECT ` + deliveryCols + ` FROM deliveries d WHERE ` + where + ` ORDER BY d.created_at DESC, d.event_id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []bridge.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

// Delivery implements bridge.DeliveryStore.
func (s *Store) Delivery(ctx context.Context, id string) (*bridge.Delivery, []bridge.Attempt, error) {
	d, err := scanDelivery(s.db.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("delivery %s: %w", id, bridge.ErrDeliveryNotFound)
	}
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT at, status, latency_ms, response, error FROM delivery_attempts WHERE delivery_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var attempts []bridge.Attempt
	for rows.Next() {
		var a bridge.Attempt
		var at int64
		if err := rows.Scan(&at, &a.Status, &a.Latency, &a.Response, &a.Error); err != nil {
			return nil, nil, err
		}
		a.At = fromNanos(at)
		attempts = append(attempts, a)
	}
	return d, attempts, rows.Err()
}

// Replay implements bridge.DeliveryStore, waiting through a busy bridge's writer (patient).
func (s *Store) Replay(ctx context.Context, ids []string, f bridge.DeliveryFilter, now time.Time) (int, error) {
	where, args := deliveryWhere(f)
	if len(ids) > 0 {
		where += " AND id IN (" + marks(len(ids)) + ")"
		for _, id := range ids {
			args = append(args, id)
		}
	}
	var n int64
	err := patient(ctx, func() error {
		res, err := s.db.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
			lease_until = CASE WHEN lease_until > ? THEN lease_until ELSE 0 END, updated_at = ? WHERE `+where,
			append([]any{now.UnixNano(), now.UnixNano(), now.UnixNano()}, args...)...)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return int(n), err
}

// DisableEndpoint implements bridge.DeliveryStore: only the transition from enabled writes (an
// endpoint already disabled keeps its first reason and time), and only it emits the events
// (endpoint.disabled), in the same transaction. It and EnableEndpoint wait through a busy
// bridge's writer (patient).
func (s *Store) DisableEndpoint(ctx context.Context, name, reason string, now time.Time, events ...bridge.Event) error {
	return patient(ctx, func() error { return s.disableEndpoint(ctx, name, reason, now, events) })
}

func (s *Store) disableEndpoint(ctx context.Context, name, reason string, now time.Time, events []bridge.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO endpoint_state (name, disabled_at, reason) VALUES (?,?,?)
			ON CONFLICT (name) DO NOTHING`, name, now.UnixNano(), reason)
		if err != nil {
			return fmt.Errorf("disable endpoint %s: %w", name, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // already disabled: no transition, no event
		}
		for _, e := range events {
			if err := s.emit(ctx, tx, e, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// EnableEndpoint implements bridge.DeliveryStore.
func (s *Store) EnableEndpoint(ctx context.Context, name string) error {
	return patient(ctx, func() error {
		_, err := s.db.ExecContext(ctx, `DELETE FROM endpoint_state WHERE name = ?`, name)
		return err
	})
}

// DisabledEndpoints implements bridge.DeliveryStore.
func (s *Store) DisabledEndpoints(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, reason FROM endpoint_state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, r string
		if err := rows.Scan(&n, &r); err != nil {
			return nil, err
		}
		out[n] = r
	}
	return out, rows.Err()
}
