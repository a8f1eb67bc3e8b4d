package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// fanOutAll is FanOut for many events in a few statements: one UPDATE marks the events handed
// on and says which exist (ErrUnknownEvent for the others), one INSERT per rowsPerStatement
// deliveries creates them. The webhook-id is fixed here, once: a delivery that already exists
// (a redelivered message) keeps its own, and retries and replays reuse the stored one. The new
// deliveries that claims can take at once (bridge.LeaseFanOuts) are written leased and added
// to the claims' Claimed.
func fanOutAll(ctx context.Context, tx *sql.Tx, items []bridge.FanOutItem, now time.Time, claims []bridge.ClaimItem) error {
	if len(items) == 0 {
		return nil
	}
	events, err := markFanned(ctx, tx, items, now)
	if err != nil {
		return fmt.Errorf("fan out %d events: %w", len(items), err)
	}
	rows, err := bridge.NewDeliveries(items, events)
	if err != nil {
		return err
	}
	var picked []int
	if len(claims) > 0 && len(rows) > 0 {
		order, err := fanOutOrder(ctx, tx, rows)
		if err != nil {
			return fmt.Errorf("fan out %d events: %w", len(items), err)
		}
		picked = bridge.LeaseFanOuts(rows, claims, order, now)
	}
	written := map[string]bool{}
	for i := 0; i < len(rows); i += rowsPerStatement {
		if err := insertDeliveries(ctx, tx, rows[i:min(i+rowsPerStatement, len(rows))], now, written); err != nil {
			return fmt.Errorf("fan out %d events: %w", len(items), err)
		}
	}
	bridge.AddLeased(claims, rows, picked, written)
	return nil
}

// markFanned marks items' events handed on and returns those the outbox has, each as a
// delivery to copy (its event's fields set, pending, due now).
func markFanned(ctx context.Context, tx *sql.Tx, items []bridge.FanOutItem, now time.Time) (map[int64]bridge.Delivery, error) {
	args := []any{now.UnixNano()}
	for i := range items {
		items[i].Err = nil
		args = append(args, items[i].Ref.EventID)
	}
	rows, err := tx.QueryContext(ctx, `UPDATE outbox SET delivered_at = COALESCE(delivered_at, ?)
		WHERE id IN (`+marks(len(items))+`) RETURNING id, type, job_id, transcription_id, data, created_at`, args...)
	if err != nil {
		return nil, err
	}
	events := make(map[int64]bridge.Delivery, len(items))
	for rows.Next() {
		d := bridge.Delivery{Status: bridge.DeliveryPending, NextAttemptAt: now.UTC(), CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
		var data string
		var at int64
		if err := rows.Scan(&d.EventID, &d.Type, &d.JobID, &d.TranscriptionID, &data, &at); err != nil {
			rows.Close()
			return nil, err
		}
		d.Data, d.EventAt = []byte(data), fromNanos(at)
		events[d.EventID] = d
	}
	return events, errors.Join(rows.Err(), rows.Close())
}

// fanOutOrder reads what bridge.LeaseFanOuts needs of rows' jobs: their first events still to
// fan out (after markFanned), their first pending deliveries per endpoint (before rows are
// written) and the paused endpoints.
func fanOutOrder(ctx context.Context, tx *sql.Tx, rows []bridge.Delivery) (bridge.FanOutOrder, error) {
	o := bridge.FanOutOrder{Unfanned: map[string]int64{}, Pending: map[bridge.JobEndpoint]int64{}, Paused: map[string]bool{}}
	var jobs []any
	seen := map[string]bool{}
	for _, d := range rows {
		if !seen[d.JobID] {
			seen[d.JobID] = true
			jobs = append(jobs, d.JobID)
		}
	}
	err := scanAll(ctx, tx, `SELECT job_id, '', MIN(id) FROM outbox WHERE delivered_at IS NULL AND job_id IN (`+marks(len(jobs))+`)
		GROUP BY job_id`, jobs, func(job, _ string, id int64) { o.Unfanned[job] = id })
	if err != nil {
		return o, fmt.Errorf("read events still to fan out: %w", err)
	}
	// deliveries_order (job_id, endpoint, event_id), pending only: a look per job.
	err = scanAll(ctx, tx, `SELECT job_id, endpoint, MIN(event_id) FROM deliveries
		WHERE status = 'pending' AND job_id IN (`+marks(len(jobs))+`) GROUP BY job_id, endpoint`, jobs,
		func(job, ep string, id int64) { o.Pending[bridge.JobEndpoint{Job: job, Endpoint: ep}] = id })
	if err != nil {
		return o, fmt.Errorf("read pending deliveries: %w", err)
	}
	err = scanAll(ctx, tx, `SELECT name, '', 0 FROM endpoint_state`, nil, func(name, _ string, _ int64) { o.Paused[name] = true })
	if err != nil {
		return o, fmt.Errorf("read paused endpoints: %w", err)
	}
	return o, nil
}

// scanAll runs q and hands each row's (text, text, integer) to fn.
func scanAll(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(a, b string, n int64)) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var a, b string
		var n int64
		if err := rows.Scan(&a, &b, &n); err != nil {
			rows.Close()
			return err
		}
		fn(a, b, n)
	}
	return errors.Join(rows.Err(), rows.Close())
}

// insertDeliveries writes rows (a leased one with its lease, due when the lease ends: claims do
// not look at it before) and adds the ids it wrote to
// written: a delivery of the same event and endpoint that already exists is kept as it is.
func insertDeliveries(ctx context.Context, tx *sql.Tx, rows []bridge.Delivery, now time.Time, written map[string]bool) error {
	args := make([]any, 0, 4+5*len(rows))
	args = append(args, bridge.DeliveryPending, now.UnixNano(), now.UnixNano(), now.UnixNano()) // the SELECT's, then VALUES'
	for _, d := range rows {
		args = append(args, d.ID, d.Endpoint, d.WebhookID, d.EventID, nanos(d.LeaseUntil))
	}
	res, err := tx.QueryContext(ctx, `INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id,
		data, event_at, status, next_attempt_at, created_at, updated_at, lease_until)
		SELECT v.column1, o.id, v.column2, v.column3, o.type, o.job_id, o.transcription_id, '', o.created_at, ?,
			CASE WHEN v.column5 > 0 THEN v.column5 ELSE ? END, ?, ?, v.column5
		FROM (VALUES `+placeholders(len(rows), 5)+`) v JOIN outbox o ON o.id = v.column4 WHERE true
		ON CONFLICT (event_id, endpoint) DO NOTHING RETURNING id`, args...)
	if err != nil {
		return err
	}
	for res.Next() {
		var id string
		if err := res.Scan(&id); err != nil {
			res.Close()
			return err
		}
		written[id] = true
	}
	return errors.Join(res.Err(), res.Close())
}
