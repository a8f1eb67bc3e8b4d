package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// fanOutTx is bridge.FanOutTx on a SQLite transaction: a few statements for many rows.
type fanOutTx struct{ tx *sql.Tx }

var _ bridge.FanOutTx = fanOutTx{}

// MarkFanned implements bridge.FanOutTx: one UPDATE … RETURNING.
func (f fanOutTx) MarkFanned(ctx context.Context, ids []int64, now time.Time) (map[int64]bridge.Delivery, error) {
	args := []any{now.UnixNano()}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := f.tx.QueryContext(ctx, `UPDATE outbox SET delivered_at = COALESCE(delivered_at, ?)
		WHERE id IN (`+marks(len(ids))+`) RETURNING id, type, job_id, transcription_id, data, created_at`, args...)
	if err != nil {
		return nil, err
	}
	events := make(map[int64]bridge.Delivery, len(ids))
	for rows.Next() {
		var d bridge.Delivery
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

// FanOutOrder implements bridge.FanOutTx: a look per job in outbox_unfanned_job and in
// deliveries_order (job_id, endpoint, event_id; pending only), and the endpoint_state table.
// The indexes are named: for an IN list of a few dozen jobs, SQLite's planner (no statistics)
// would rather walk every event not fanned out (outbox_pending) or every pending delivery (by a
// status index), milliseconds per batch under a backlog.
func (f fanOutTx) FanOutOrder(ctx context.Context, jobs []string) (bridge.FanOutOrder, error) {
	o := bridge.FanOutOrder{Unfanned: map[string]int64{}, Pending: map[bridge.JobEndpoint]int64{}, Paused: map[string]bool{}}
	args := make([]any, len(jobs))
	for i, j := range jobs {
		args[i] = j
	}
	err := scanAll(ctx, f.tx, `SELECT job_id, '', MIN(id) FROM outbox INDEXED BY outbox_unfanned_job
		WHERE delivered_at IS NULL AND job_id IN (`+marks(len(jobs))+`)
		GROUP BY job_id`, args, func(job, _ string, id int64) { o.Unfanned[job] = id })
	if err != nil {
		return o, fmt.Errorf("read events still to fan out: %w", err)
	}
	err = scanAll(ctx, f.tx, `SELECT job_id, endpoint, MIN(event_id) FROM deliveries INDEXED BY deliveries_order
		WHERE status = 'pending' AND job_id IN (`+marks(len(jobs))+`) GROUP BY job_id, endpoint`, args,
		func(job, ep string, id int64) { o.Pending[bridge.JobEndpoint{Job: job, Endpoint: ep}] = id })
	if err != nil {
		return o, fmt.Errorf("read pending deliveries: %w", err)
	}
	err = scanAll(ctx, f.tx, `SELECT name, '', 0 FROM endpoint_state`, nil, func(name, _ string, _ int64) { o.Paused[name] = true })
	if err != nil {
		return o, fmt.Errorf("read paused endpoints: %w", err)
	}
	return o, nil
}

// InsertDeliveries implements bridge.FanOutTx: one INSERT … SELECT per rowsPerStatement rows
// (insertDeliveries).
func (f fanOutTx) InsertDeliveries(ctx context.Context, rows []bridge.Delivery, now time.Time) (map[string]bool, error) {
	written := make(map[string]bool, len(rows))
	for i := 0; i < len(rows); i += rowsPerStatement {
		if err := insertDeliveries(ctx, f.tx, rows[i:min(i+rowsPerStatement, len(rows))], now, written); err != nil {
			return nil, err
		}
	}
	return written, nil
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

// insertDeliveries writes rows (a leased one due when its lease ends: claims do not look at it
// before) and adds the ids it wrote to written. Their ids are new, so when the INSERT writes
// fewer rows than given (an event's delivery to the endpoint exists already), the ids found
// afterwards are the ones it wrote.
func insertDeliveries(ctx context.Context, tx *sql.Tx, rows []bridge.Delivery, now time.Time, written map[string]bool) error {
	args := make([]any, 0, 4+5*len(rows))
	args = append(args, bridge.DeliveryPending, now.UnixNano(), now.UnixNano(), now.UnixNano()) // the SELECT's, then VALUES'
	for _, d := range rows {
		args = append(args, d.ID, d.Endpoint, d.WebhookID, d.EventID, nanos(d.LeaseUntil))
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id,
		data, event_at, status, next_attempt_at, created_at, updated_at, lease_until)
		SELECT v.column1, o.id, v.column2, v.column3, o.type, o.job_id, o.transcription_id, '', o.created_at, ?,
			CASE WHEN v.column5 > 0 THEN v.column5 ELSE ? END, ?, ?, v.column5
		FROM (VALUES `+placeholders(len(rows), 5)+`) v JOIN outbox o ON o.id = v.column4 WHERE true
		ON CONFLICT (event_id, endpoint) DO NOTHING`, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == int64(len(rows)) {
		for _, d := range rows {
			written[d.ID] = true
		}
		return nil
	}
	ids := make([]any, len(rows))
	for i, d := range rows {
		ids[i] = d.ID
	}
	return scanAll(ctx, tx, `SELECT id, '', 0 FROM deliveries WHERE id IN (`+marks(len(rows))+`)`, ids,
		func(id, _ string, _ int64) { written[id] = true })
}
