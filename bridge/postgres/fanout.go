package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// fanOutAll is FanOut for many events: one UPDATE marks the events handed on and says which
// exist (ErrUnknownEvent for the others: an UPDATE of no row, not a failed statement, so the
// transaction goes on), one INSERT creates their deliveries. Marking the events locks their
// outbox rows, in id order, so concurrent fan-outs of one event (a redelivered message on
// another replica) run one after the other and the second inserts nothing (ON CONFLICT DO
// NOTHING on event and endpoint). The webhook-id is fixed here, once: retries and replays
// reuse the stored one. The new deliveries that claims can take at once
// (bridge.LeaseFanOuts) are written leased and added to the claims' Claimed.
func fanOutAll(ctx context.Context, tx *sql.Tx, items []bridge.FanOutItem, now time.Time, claims []bridge.ClaimItem) error {
	if len(items) == 0 {
		return nil
	}
	events, err := markFanned(ctx, tx, items, now)
	if err != nil {
		return fmt.Errorf("fan out %d events: %w", len(items), err)
	}
	rows, err := bridge.NewDeliveries(items, events)
	if err != nil || len(rows) == 0 {
		return err
	}
	var picked []int
	if len(claims) > 0 {
		order, err := fanOutOrder(ctx, tx, rows)
		if err != nil {
			return fmt.Errorf("fan out %d events: %w", len(items), err)
		}
		picked = bridge.LeaseFanOuts(rows, claims, order, now)
	}
	written, err := insertDeliveries(ctx, tx, rows, now)
	if err != nil {
		return fmt.Errorf("fan out %d events: %w", len(items), err)
	}
	bridge.AddLeased(claims, rows, picked, written)
	return nil
}

// markFanned marks items' events handed on and returns those the outbox has, each as a
// delivery to copy (its event's fields set, pending, due now).
func markFanned(ctx context.Context, tx *sql.Tx, items []bridge.FanOutItem, now time.Time) (map[int64]bridge.Delivery, error) {
	ids := make([]int64, len(items))
	for i := range items {
		items[i].Err = nil
		ids[i] = items[i].Ref.EventID
	}
	rows, err := tx.QueryContext(ctx, `UPDATE outbox SET delivered_at = COALESCE(delivered_at, $1)
		WHERE id IN (SELECT id FROM outbox WHERE id = ANY($2) ORDER BY id FOR UPDATE)
		RETURNING id, type, job_id, transcription_id, data, created_at`, now.UnixNano(), ids)
	events, err := collect(rows, err, func(r scanner) (bridge.Delivery, error) {
		d := bridge.Delivery{Status: bridge.DeliveryPending, NextAttemptAt: now.UTC(), CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
		var data string
		var at int64
		err := r.Scan(&d.EventID, &d.Type, &d.JobID, &d.TranscriptionID, &data, &at)
		d.Data, d.EventAt = []byte(data), fromNanos(at)
		return d, err
	})
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]bridge.Delivery, len(events))
	for _, d := range events {
		byID[d.EventID] = d
	}
	return byID, nil
}

// fanOutOrder reads what bridge.LeaseFanOuts needs of rows' jobs: their first events still to
// fan out (after markFanned), their first pending deliveries per endpoint (before rows are
// written) and the paused endpoints. An event another replica is fanning out is not committed
// yet, so it counts as still to fan out: its job's later events wait.
func fanOutOrder(ctx context.Context, tx *sql.Tx, rows []bridge.Delivery) (bridge.FanOutOrder, error) {
	o := bridge.FanOutOrder{Unfanned: map[string]int64{}, Pending: map[bridge.JobEndpoint]int64{}, Paused: map[string]bool{}}
	var jobs []string
	seen := map[string]bool{}
	for _, d := range rows {
		if !seen[d.JobID] {
			seen[d.JobID] = true
			jobs = append(jobs, d.JobID)
		}
	}
	type first struct {
		job, endpoint string
		id            int64
	}
	scan := func(r scanner) (first, error) {
		var f first
		return f, r.Scan(&f.job, &f.endpoint, &f.id)
	}
	rs, err := tx.QueryContext(ctx, `SELECT job_id, '', MIN(id) FROM outbox WHERE delivered_at IS NULL AND job_id = ANY($1)
		GROUP BY job_id`, jobs)
	unfanned, err := collect(rs, err, scan)
	if err != nil {
		return o, fmt.Errorf("read events still to fan out: %w", err)
	}
	for _, f := range unfanned {
		o.Unfanned[f.job] = f.id
	}
	// deliveries_order (job_id, endpoint, event_id), pending only: a look per job.
	rs, err = tx.QueryContext(ctx, `SELECT job_id, endpoint, MIN(event_id) FROM deliveries
		WHERE status = 'pending' AND job_id = ANY($1) GROUP BY job_id, endpoint`, jobs)
	pending, err := collect(rs, err, scan)
	if err != nil {
		return o, fmt.Errorf("read pending deliveries: %w", err)
	}
	for _, f := range pending {
		o.Pending[bridge.JobEndpoint{Job: f.job, Endpoint: f.endpoint}] = f.id
	}
	rs, err = tx.QueryContext(ctx, `SELECT name, '', 0 FROM endpoint_state`)
	paused, err := collect(rs, err, scan)
	if err != nil {
		return o, fmt.Errorf("read paused endpoints: %w", err)
	}
	for _, f := range paused {
		o.Paused[f.job] = true
	}
	return o, nil
}

// insertDeliveries writes rows (a leased one with its lease, due when the lease ends: claims do
// not look at it before) and returns the ids it wrote: a delivery of the same event and
// endpoint that already exists is kept as it is.
func insertDeliveries(ctx context.Context, tx *sql.Tx, rows []bridge.Delivery, now time.Time) (map[string]bool, error) {
	ids, eps, hooks := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	events, leases := make([]int64, len(rows)), make([]int64, len(rows))
	for i, d := range rows {
		ids[i], eps[i], hooks[i], events[i], leases[i] = d.ID, d.Endpoint, d.WebhookID, d.EventID, nanos(d.LeaseUntil)
	}
	rs, err := tx.QueryContext(ctx, `INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id,
		data, event_at, status, next_attempt_at, created_at, updated_at, lease_until)
		SELECT v.id, o.id, v.endpoint, v.webhook_id, o.type, o.job_id, o.transcription_id, '', o.created_at, $6,
			CASE WHEN v.lease_until > 0 THEN v.lease_until ELSE $7 END, $7, $7, v.lease_until
		FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS v(id, endpoint, webhook_id, event_id, lease_until)
		JOIN outbox o ON o.id = v.event_id
		ON CONFLICT (event_id, endpoint) DO NOTHING RETURNING id`,
		ids, eps, hooks, events, leases, bridge.DeliveryPending, now.UnixNano())
	got, err := collect(rs, err, func(r scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	if err != nil {
		return nil, err
	}
	written := make(map[string]bool, len(got))
	for _, id := range got {
		written[id] = true
	}
	return written, nil
}
