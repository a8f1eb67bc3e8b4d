package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// noteCompleted records, for a transcription.completed accepted for the first time, how long
// after its event (the webhook's timestamp: when the bridge saw the transcription complete)
// the receiver accepted it. Called under rx.mu.
func (rx *chaosReceiver) noteCompleted(job string, body []byte) {
	if rx.completed[job] {
		return
	}
	var m struct {
		Timestamp string `json:"timestamp"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, m.Timestamp)
	if err != nil {
		return
	}
	if lag := time.Since(at); lag > rx.slowest {
		rx.slowest, rx.slowestJob = lag, job
	}
}

// slowestCompletion returns the longest time from a transcription's completion to the
// receiver's accepting its transcription.completed, and the job.
func (rx *chaosReceiver) slowestCompletion() (time.Duration, string) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.slowest, rx.slowestJob
}

// diagnoseUndelivered describes, from the database of dsn, every job whose
// transcription.completed the receiver has not accepted: its state, its outbox events
// (fanned out or not) and its deliveries (status, attempts, lease, last error), with the
// bus's consumer positions: whether a delivery is stuck behind a dead replica's lease,
// dead-lettered, or was never fanned out (lost).
func diagnoseUndelivered(dsn string, rx *chaosReceiver) string {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rx.mu.Lock()
	done := map[string]bool{}
	for j := range rx.completed {
		done[j] = true
	}
	rx.mu.Unlock()
	var b strings.Builder
	now := time.Now().UnixNano()
	jobs, err := db.QueryContext(ctx, `SELECT id, state, reason, transcription_id FROM jobs ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	var ids []string
	for jobs.Next() {
		var id, state, reason, tid string
		jobs.Scan(&id, &state, &reason, &tid)
		if !done[id] {
			ids = append(ids, id)
			fmt.Fprintf(&b, "job %s: state %s (%s), transcription %s\n", id, state, reason, tid)
		}
	}
	jobs.Close()
	for _, id := range ids {
		rows, err := db.QueryContext(ctx, `SELECT id, type, created_at, COALESCE(delivered_at, 0) FROM outbox WHERE job_id = $1 ORDER BY id`, id)
		if err == nil {
			for rows.Next() {
				var eid, created, delivered int64
				var typ string
				rows.Scan(&eid, &typ, &created, &delivered)
				fmt.Fprintf(&b, "  event %d %s: created %s ago, fanned out %v\n", eid, typ, time.Duration(now-created).Round(time.Millisecond), delivered != 0)
			}
			rows.Close()
		}
		rows, err = db.QueryContext(ctx, `SELECT event_id, type, status, attempts, next_attempt_at, lease_until, last_status, last_error FROM deliveries WHERE job_id = $1 ORDER BY event_id`, id)
		if err == nil {
			for rows.Next() {
				var eid, next, lease int64
				var typ, status, lastErr string
				var attempts, lastStatus int
				rows.Scan(&eid, &typ, &status, &attempts, &next, &lease, &lastStatus, &lastErr)
				fmt.Fprintf(&b, "  delivery of event %d %s: %s after %d attempts (last %d %q), next attempt in %s, lease left %s\n", eid, typ, status, attempts,
					lastStatus, lastErr, time.Duration(next-now).Round(time.Millisecond), time.Duration(lease-now).Round(time.Millisecond))
			}
			rows.Close()
		}
	}
	if len(ids) > 0 {
		if rows, err := db.QueryContext(ctx, `SELECT consumer_group, COALESCE(offset_acked, 0), last_processed_transaction_id::text,
			leased_by, lease_until FROM "watermill_offsets_events"`); err == nil {
			for rows.Next() {
				var group, tx, holder string
				var off, until int64
				rows.Scan(&group, &off, &tx, &holder, &until)
				fmt.Fprintf(&b, "bus group %s: offset %d, transaction %s, lease %q until %s\n", group, off, tx, holder, time.Unix(0, until).UTC().Format(time.RFC3339Nano))
			}
			rows.Close()
		}
		var maxOff int64
		db.QueryRowContext(ctx, `SELECT COALESCE(MAX("offset"), 0) FROM "watermill_events"`).Scan(&maxOff)
		fmt.Fprintf(&b, "bus: last offset %d\n", maxOff)
	}
	return b.String()
}

// jobStory tells, from the database of dsn, how job's events went: when each was written and
// fanned out, and each delivery attempt (when, status, error), relative to the job's first
// event. It explains a slow completion.
func jobStory(dsn, job string) string {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b strings.Builder
	var t0 int64
	rows, err := db.QueryContext(ctx, `SELECT id, type, created_at, COALESCE(delivered_at, 0) FROM outbox WHERE job_id = $1 ORDER BY id`, job)
	if err != nil {
		return err.Error()
	}
	for rows.Next() {
		var id, created, fanned int64
		var typ string
		rows.Scan(&id, &typ, &created, &fanned)
		if t0 == 0 {
			t0 = created
		}
		fmt.Fprintf(&b, "  event %d %s written at +%s, fanned out at +%s\n", id, typ, time.Duration(created-t0).Round(time.Millisecond), time.Duration(fanned-t0).Round(time.Millisecond))
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, `SELECT d.type, d.created_at, a.at, a.status, a.error FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id
		WHERE d.job_id = $1 ORDER BY a.seq`, job)
	if err != nil {
		return b.String() + err.Error()
	}
	for rows.Next() {
		var typ, msg string
		var created, at int64
		var status int
		rows.Scan(&typ, &created, &at, &status, &msg)
		fmt.Fprintf(&b, "  %s (delivery made at +%s): attempt at +%s answered %d %s\n", typ, time.Duration(created-t0).Round(time.Millisecond),
			time.Duration(at-t0).Round(time.Millisecond), status, msg)
	}
	rows.Close()
	return b.String()
}

// attemptFigures counts, in the database of dsn, the delivery attempts, those that failed
// fetching the transcription for a full payload (the endpoint never contacted), the most
// attempts one delivery took, and the dead letters.
func attemptFigures(dsn string) string {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var all, fetch, most, dead int
	err = db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM delivery_attempts), (SELECT count(*) FROM delivery_attempts WHERE error LIKE 'get transcription%'),
		(SELECT COALESCE(max(attempts), 0) FROM deliveries), (SELECT count(*) FROM deliveries WHERE status = 'dead')`).Scan(&all, &fetch, &most, &dead)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d attempts, %d of them failed fetching the transcription (the endpoint not contacted); at most %d attempts for one delivery; %d dead letters", all, fetch, most, dead)
}
