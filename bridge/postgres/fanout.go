package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// fanOutTx is bridge.FanOutTx on a PostgreSQL transaction. Marking the events locks their
// outbox rows, in id order, so concurrent fan-outs of one event (a redelivered message on
// another replica) run one after the other and the second inserts nothing (ON CONFLICT DO
// NOTHING on event and endpoint). An unknown event is an UPDATE of no row, not a failed
// statement: the transaction goes on.
type fanOutTx struct{ tx *sql.Tx }

var _ bridge.FanOutTx = fanOutTx{}

// MarkFanned implements bridge.FanOutTx: one UPDATE … RETURNING.
func (f fanOutTx) MarkFanned(ctx context.Context, ids []int64, now time.Time) (map[int64]bridge.Delivery, error) {
	rows, err := f.tx.QueryContext(ctx, `UPDATE outbox SET delivered_at = COALESCE(delivered_at, $1)
		WHERE id IN (SELECT id FROM outbox WHERE id = ANY($2) ORDER BY id FOR UPDATE)
		RETURNING id, type, job_id, transcription_id, data, created_at`, now.UnixNano(), ids)
	events, err := collect(rows, err, func(r scanner) (bridge.Delivery, error) {
		var d bridge.Delivery
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

// FanOutOrder implements bridge.FanOutTx: a look per job in outbox_unfanned_job and in
// deliveries_order (job_id, endpoint, event_id; pending only), and the endpoint_state table.
// An event another replica is fanning out is not committed yet, so it counts as still to fan
// out: its job's later events wait.
func (f fanOutTx) FanOutOrder(ctx context.Context, jobs []string) (bridge.FanOutOrder, error) {
	o := bridge.FanOutOrder{Unfanned: map[string]int64{}, Pending: map[bridge.JobEndpoint]int64{}, Paused: map[string]bool{}}
	type first struct {
		job, endpoint string
		id            int64
	}
	scan := func(r scanner) (first, error) {
		var v first
		return v, r.Scan(&v.job, &v.endpoint, &v.id)
	}
	rs, err := f.tx.QueryContext(ctx, `SELECT job_id, '', MIN(id) FROM outbox WHERE delivered_at IS NULL AND job_id = ANY($1)
		GROUP BY job_id`, jobs)
	unfanned, err := collect(rs, err, scan)
	if err != nil {
		return o, fmt.Errorf("read events still to fan out: %w", err)
	}
	for _, u := range unfanned {
		o.Unfanned[u.job] = u.id
	}
	rs, err = f.tx.QueryContext(ctx, `SELECT job_id, endpoint, MIN(event_id) FROM deliveries
		WHERE status = 'pending' AND job_id = ANY($1) GROUP BY job_id, endpoint`, jobs)
	pending, err := collect(rs, err, scan)
	if err != nil {
		return o, fmt.Errorf("read pending deliveries: %w", err)
	}
	for _, p := range pending {
		o.Pending[bridge.JobEndpoint{Job: p.job, Endpoint: p.endpoint}] = p.id
	}
	rs, err = f.tx.QueryContext(ctx, `SELECT name, '', 0 FROM endpoint_state`)
	paused, err := collect(rs, err, scan)
	if err != nil {
		return o, fmt.Errorf("read paused endpoints: %w", err)
	}
	for _, p := range paused {
		o.Paused[p.job] = true
	}
	return o, nil
}

// InsertDeliveries implements bridge.FanOutTx: one INSERT … SELECT FROM unnest(…) RETURNING.
func (f fanOutTx) InsertDeliveries(ctx context.Context, rows []bridge.Delivery, now time.Time) (map[string]bool, error) {
	ids, eps, hooks := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	events, leases := make([]int64, len(rows)), make([]int64, len(rows))
	for i, d := range rows {
		ids[i], eps[i], hooks[i], events[i], leases[i] = d.ID, d.Endpoint, d.WebhookID, d.EventID, nanos(d.LeaseUntil)
	}
	rs, err := f.tx.QueryContext(ctx, `INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id,
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
