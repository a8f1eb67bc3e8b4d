package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var _ bridge.DeliveryStore = (*Store)(nil)

// deliveryCols are a delivery's columns, read from "deliveries d". A delivery fanned out since
// migration 0009 keeps no copy of its event's data (its data is empty): it is read from the outbox,
// as in the SQLite store (store copy moves the rows as they are).
const deliveryCols = `d.id, d.event_id, d.endpoint, d.webhook_id, d.type, d.job_id, d.transcription_id,
	CASE WHEN d.data = '' THEN COALESCE((SELECT o.data FROM outbox o WHERE o.id = d.event_id), '') ELSE d.data END,
	d.event_at, d.status, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, d.updated_at`

func scanDelivery(row scanner) (bridge.Delivery, error) {
	var d bridge.Delivery
	var data string
	var eventAt, next, created, updated int64
	if err := row.Scan(&d.ID, &d.EventID, &d.Endpoint, &d.WebhookID, &d.Type, &d.JobID, &d.TranscriptionID, &data, &eventAt,
		&d.Status, &d.Attempts, &next, &d.LastStatus, &d.LastError, &created, &updated); err != nil {
		return d, err
	}
	d.Data = json.RawMessage(data)
	d.EventAt, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromNanos(eventAt), fromNanos(next), fromNanos(created), fromNanos(updated)
	return d, nil
}

// FanOut implements bridge.DeliveryStore (bridge.FanOutAll).
func (s *Store) FanOut(ctx context.Context, ref bridge.EventRef, endpoints []string, now time.Time) error {
	items := []bridge.FanOutItem{{Ref: ref, Endpoints: endpoints}}
	if err := s.tx(ctx, func(tx *sql.Tx) error { return bridge.FanOutAll(ctx, fanOutTx{tx}, items, now, nil) }); err != nil {
		return err
	}
	return items[0].Err
}

// Claim implements bridge.DeliveryStore: SELECT … FOR UPDATE SKIP LOCKED picks the due
// deliveries that no other claimer is leasing at this moment, and the lease is written in the
// same transaction. A claimer that finds a row a committed claim has just leased re-reads it
// (READ COMMITTED) and skips it, its lease no longer run out.
func (s *Store) Claim(ctx context.Context, endpoint string, now time.Time, lease time.Duration, limit int) ([]bridge.Delivery, error) {
	var out []bridge.Delivery
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = claim(ctx, tx, endpoint, now, lease, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries of %q: %w", endpoint, err)
	}
	return out, nil
}

// claim is Claim inside tx. A delivery waits for the earlier pending deliveries of its job at
// its endpoint and for the earlier events of its job not yet fanned out (the relay fans out in
// batches, which may commit out of event order; a fan-out not yet committed counts as not done).
// One endpoint's claim compares d.endpoint with it alone, with no "or any endpoint" test, so the
// deliveries_claim index serves it. The earlier pending deliveries of a job are looked up by
// job (deliveries_order): appending an empty string to e.endpoint keeps the planner from
// reading them through deliveries_claim, which it chose when its statistics counted few pending
// deliveries, reading every pending delivery of the endpoint for each one the claim considered
// (3 replicas on NATS spent most of PostgreSQL's time there: 7,135–8,070 deliveries/s with
// this, 5,181–6,665 without).
func claim(ctx context.Context, tx *sql.Tx, endpoint string, now time.Time, lease time.Duration, limit int) ([]bridge.Delivery, error) {
	which, args := "", []any{now.UnixNano(), limit}
	if endpoint != "" {
		// A paused endpoint first: the search below would walk its whole backlog, every
		// delivery refused one by one, at every commit that fans out to it.
		var paused bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM endpoint_state WHERE name = $1)`, endpoint).Scan(&paused); err != nil || paused {
			return nil, err
		}
		which, args = "AND d.endpoint = $3", append(args, endpoint)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d
		WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND d.lease_until <= $1 `+which+`
		AND d.endpoint NOT IN (SELECT name FROM endpoint_state)
		AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.job_id = d.job_id AND e.endpoint || '' = d.endpoint
			AND e.status = 'pending' AND e.event_id < d.event_id)
		AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = d.job_id AND o.id < d.event_id AND o.delivered_at IS NULL)
		ORDER BY d.next_attempt_at, d.event_id LIMIT $2
		FOR UPDATE OF d SKIP LOCKED`, args...)
	out, err := collect(rows, err, scanDelivery)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, d := range out {
		ids[i] = d.ID
	}
	until := now.Add(lease)
	if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = $1 WHERE id = ANY($2)`, until.UnixNano(), ids); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].LeaseUntil = until.UTC()
	}
	return out, nil
}

// Abandon implements bridge.DeliveryStore.
func (s *Store) Abandon(ctx context.Context, known []string, now time.Time) (int, error) {
	if known == nil {
		known = []string{}
	}
	res, err := s.db.ExecContext(ctx, `UPDATE deliveries SET status = 'dead', last_error = 'the endpoint is no longer configured',
		updated_at = $1 WHERE status = 'pending' AND NOT (endpoint = ANY($2))`, now.UnixNano(), known)
	if err != nil {
		return 0, fmt.Errorf("abandon deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Record implements bridge.DeliveryStore. It fails on an unknown delivery.
func (s *Store) Record(ctx context.Context, d *bridge.Delivery, a bridge.Attempt) error {
	var lost error
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		lost, err = record(ctx, tx, d, a)
		return err
	})
	if err != nil {
		return err
	}
	return lost
}

// record is Record inside tx: it returns ErrConflict or ErrDeliveryNotFound as the item's
// outcome (the transaction goes on: both are found by a SELECT, never by a failed statement,
// which would abort the transaction), and an error only when the transaction fails.
func record(ctx context.Context, tx *sql.Tx, d *bridge.Delivery, a bridge.Attempt) (outcome, err error) {
	var lease int64
	err = tx.QueryRowContext(ctx, `SELECT lease_until FROM deliveries WHERE id = $1 FOR UPDATE`, d.ID).Scan(&lease)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("record an attempt of delivery %s: %w", d.ID, bridge.ErrDeliveryNotFound), nil
	}
	if err != nil {
		return nil, fmt.Errorf("record an attempt of delivery %s: %w", d.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, endpoint, at, status, latency_ms, response, error)
		VALUES ($1,$2,$3,$4,$5,$6,$7)`, d.ID, d.Endpoint, a.At.UnixNano(), a.Status, a.Latency, a.Response, a.Error); err != nil {
		return nil, fmt.Errorf("record an attempt of delivery %s: %w", d.ID, err)
	}
	if !d.LeaseUntil.IsZero() && lease != d.LeaseUntil.UnixNano() {
		// The attempt happened; the newer claim decides the state.
		return fmt.Errorf("record delivery %s: claimed again since %v: %w", d.ID, d.LeaseUntil, bridge.ErrConflict), nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = $1, attempts = $2, next_attempt_at = $3, lease_until = 0,
		last_status = $4, last_error = $5, updated_at = $6 WHERE id = $7`, d.Status, d.Attempts, nanos(d.NextAttemptAt),
		a.Status, a.Error, a.At.UnixNano(), d.ID); err != nil {
		return nil, fmt.Errorf("record an attempt of delivery %s: %w", d.ID, err)
	}
	return nil, nil
}

// deliveryWhere returns f as a condition and its arguments, numbered from $(first+1).
func deliveryWhere(f bridge.DeliveryFilter, first int) (string, []any) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(first+len(args))))
	}
	if f.Endpoint != "" {
		arg("endpoint = $?", f.Endpoint)
	}
	switch {
	case slices.Contains(bridge.DeliveryStatuses, f.Status):
		// Written out, so the planner can use the partial indexes of one status
		// (deliveries_dead, deliveries_claim), which a generic plan's parameter cannot match.
		where = append(where, "status = '"+string(f.Status)+"'")
	case f.Status != "":
		arg("status = $?", f.Status)
	}
	if f.Missed {
		where = append(where, "status <> '"+string(bridge.DeliveryDelivered)+"'")
	}
	if !f.Since.IsZero() {
		arg("created_at >= $?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		arg("created_at < $?", f.Until.UnixNano())
	}
	if len(where) == 0 {
		return "TRUE", nil
	}
	return strings.Join(where, " AND "), args
}

// Deliveries implements bridge.DeliveryStore.
func (s *Store) Deliveries(ctx context.Context, f bridge.DeliveryFilter) ([]bridge.Delivery, error) {
	where, args := deliveryWhere(f, 0)
	q := `SELECT ` + deliveryCols + ` FROM deliveries d WHERE ` + where + ` ORDER BY d.created_at DESC, d.event_id DESC, d.endpoint DESC`
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	out, err := collect(rows, err, scanDelivery)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

// Delivery implements bridge.DeliveryStore. It fails on an unknown id.
func (s *Store) Delivery(ctx context.Context, id string) (*bridge.Delivery, []bridge.Attempt, error) {
	d, err := scanDelivery(s.db.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d WHERE d.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("delivery %s: %w", id, bridge.ErrDeliveryNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("delivery %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT at, status, latency_ms, response, error FROM delivery_attempts WHERE delivery_id = $1 ORDER BY seq`, id)
	attempts, err := collect(rows, err, func(r scanner) (bridge.Attempt, error) {
		var a bridge.Attempt
		var at int64
		err := r.Scan(&at, &a.Status, &a.Latency, &a.Response, &a.Error)
		a.At = fromNanos(at)
		return a, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("attempts of delivery %s: %w", id, err)
	}
	return &d, attempts, nil
}

// Replay implements bridge.DeliveryStore.
func (s *Store) Replay(ctx context.Context, ids []string, f bridge.DeliveryFilter, now time.Time) (int, error) {
	where, args := deliveryWhere(f, 1)
	if len(ids) > 0 {
		args = append(args, ids)
		where += " AND id = ANY($" + strconv.Itoa(len(args)+1) + ")"
	}
	res, err := s.db.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $1,
		lease_until = CASE WHEN lease_until > $1 THEN lease_until ELSE 0 END, updated_at = $1 WHERE `+where, append([]any{now.UnixNano()}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("replay deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DisableEndpoint implements bridge.DeliveryStore: only the transition from enabled writes (an
// endpoint already disabled keeps its first reason and time; the row's unique name decides
// between replicas), and only it emits the events (endpoint.disabled), in the same transaction.
func (s *Store) DisableEndpoint(ctx context.Context, name, reason string, now time.Time, events ...bridge.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO endpoint_state (name, disabled_at, reason) VALUES ($1,$2,$3)
			ON CONFLICT (name) DO NOTHING`, name, now.UnixNano(), reason)
		if err != nil {
			return fmt.Errorf("disable endpoint %s: %w", name, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // already disabled: no transition, no event
		}
		for _, e := range events {
			if err := emit(ctx, tx, e, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// EnableEndpoint implements bridge.DeliveryStore.
func (s *Store) EnableEndpoint(ctx context.Context, name string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM endpoint_state WHERE name = $1`, name); err != nil {
		return fmt.Errorf("enable endpoint %s: %w", name, err)
	}
	return nil
}

// DisabledEndpoints implements bridge.DeliveryStore.
func (s *Store) DisabledEndpoints(ctx context.Context) (map[string]string, error) {
	type state struct{ name, reason string }
	rows, err := s.db.QueryContext(ctx, `SELECT name, reason FROM endpoint_state`)
	states, err := collect(rows, err, func(r scanner) (state, error) {
		var st state
		return st, r.Scan(&st.name, &st.reason)
	})
	if err != nil {
		return nil, fmt.Errorf("disabled endpoints: %w", err)
	}
	out := map[string]string{}
	for _, st := range states {
		out[st.name] = st.reason
	}
	return out, nil
}
