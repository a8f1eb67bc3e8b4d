package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var _ bridge.PrivacyStore = (*Store)(nil)

// Forget implements bridge.PrivacyStore.
func (s *Store) Forget(ctx context.Context, t bridge.Tombstone) (bridge.Scrubbed, error) {
	var n bridge.Scrubbed
	err := s.tx(ctx, func(tx *sql.Tx) error {
		n = bridge.Scrubbed{}
		res, err := tx.ExecContext(ctx, `INSERT INTO tombstones (job_id, source, item_id, dedupe_key, external_id, transcription_id, reason, created_at)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (job_id) DO NOTHING`, t.JobID, t.Source, t.ItemID, t.DedupeKey, t.ExternalID,
			t.TranscriptionID, t.Reason, t.CreatedAt.UnixNano())
		if err != nil {
			return fmt.Errorf("tombstone: %w", err)
		}
		k, _ := res.RowsAffected()
		n.Tombstone = k == 1
		for _, st := range forgetSteps(&n) {
			res, err := tx.ExecContext(ctx, st.q, t.JobID, st.keep)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			*st.count += int(k)
		}
		return nil
	})
	if err != nil {
		return bridge.Scrubbed{}, fmt.Errorf("forget job %s: %w", t.JobID, err)
	}
	return n, nil
}

// forgetStep is one statement of Forget over (job id, keep), adding what it changed to count.
type forgetStep struct {
	count *int
	q     string
	keep  string
}

// forgetSteps remove a forgotten job's deliveries, attempts and events, but for its
// transcription.deleted events, and empty the reasons of its history, but for its move to
// deleted.
func forgetSteps(n *bridge.Scrubbed) []forgetStep {
	ev, st := bridge.EventDeleted, string(bridge.StateDeleted)
	return []forgetStep{
		{&n.Attempts, `DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE job_id = $1 AND type <> $2)`, ev},
		{&n.Deliveries, `DELETE FROM deliveries WHERE job_id = $1 AND type <> $2`, ev},
		{&n.Events, `DELETE FROM outbox WHERE job_id = $1 AND type <> $2 AND delivered_at IS NOT NULL`, ev},
		{&n.Events, `UPDATE outbox SET data = '{}' WHERE job_id = $1 AND type <> $2 AND delivered_at IS NULL AND data <> '{}'`, ev},
		{&n.History, `UPDATE job_history SET reason = '' WHERE job_id = $1 AND to_state <> $2 AND reason <> ''`, st},
	}
}

// Tombstoned implements bridge.PrivacyStore.
func (s *Store) Tombstoned(ctx context.Context, q bridge.TombstoneQuery) (bool, error) {
	var found bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tombstones WHERE ($1 <> '' AND job_id = $2)
		OR ($3 <> '' AND source = $4 AND item_id = $5) OR ($6 <> '' AND dedupe_key = $7) OR ($8 <> '' AND external_id = $9)
		OR ($10 <> '' AND transcription_id = $11))`, q.JobID, q.JobID, q.ItemID, q.Source, q.ItemID, q.DedupeKey, q.DedupeKey,
		q.ExternalID, q.ExternalID, q.TranscriptionID, q.TranscriptionID).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("tombstones: %w", err)
	}
	return found, nil
}

// tombstoned reports, in tx, whether a tombstone names source's item or the dedupe key.
func tombstoned(ctx context.Context, tx *sql.Tx, source, item, dedupe string) (bool, error) {
	var found bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tombstones WHERE (source = $1 AND item_id = $2)
		OR ($3 <> '' AND dedupe_key = $4))`, source, item, dedupe, dedupe).Scan(&found)
	return found, err
}

// Tombstones implements bridge.PrivacyStore.
func (s *Store) Tombstones(ctx context.Context) ([]bridge.Tombstone, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, source, item_id, dedupe_key, external_id, transcription_id, reason, created_at
		FROM tombstones ORDER BY created_at, job_id`)
	if err != nil {
		return nil, fmt.Errorf("tombstones: %w", err)
	}
	defer rows.Close()
	var out []bridge.Tombstone
	for rows.Next() {
		var t bridge.Tombstone
		var at int64
		if err := rows.Scan(&t.JobID, &t.Source, &t.ItemID, &t.DedupeKey, &t.ExternalID, &t.TranscriptionID, &t.Reason, &at); err != nil {
			return nil, err
		}
		t.CreatedAt = fromNanos(at)
		out = append(out, t)
	}
	return out, rows.Err()
}

// expiredQuery selects (id, updated_at) of kind's rows last changed before $1, with its
// arguments after the first.
func expiredQuery(kind string) (string, []any, error) {
	switch kind {
	case bridge.RetainDeliveries:
		return `SELECT id, updated_at FROM deliveries WHERE status = 'delivered' AND updated_at < $1`, nil, nil
	case bridge.RetainDeadLetters:
		return `SELECT id, updated_at FROM deliveries WHERE status = 'dead' AND updated_at < $1`, nil, nil
	case bridge.RetainJobs:
		var states []string
		for _, st := range bridge.Finished() {
			states = append(states, string(st))
		}
		return `SELECT id, updated_at FROM jobs WHERE state = ANY($2) AND updated_at < $1`, []any{states}, nil
	}
	return "", nil, fmt.Errorf("retention: unknown kind %q", kind)
}

// Expired implements bridge.PrivacyStore.
func (s *Store) Expired(ctx context.Context, kind string, before time.Time) (int, time.Time, error) {
	q, args, err := expiredQuery(kind)
	if err != nil {
		return 0, time.Time{}, err
	}
	var n int
	var oldest sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*), MIN(updated_at) FROM (`+q+`) AS expired`, append([]any{before.UnixNano()}, args...)...).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("retention %s: %w", kind, err)
	}
	return n, fromNanos(oldest.Int64), nil
}

// Purge implements bridge.PrivacyStore: the rows are locked (FOR UPDATE SKIP LOCKED), so a
// purge on another replica at once takes others.
func (s *Store) Purge(ctx context.Context, kind string, before time.Time, limit int) (int, error) {
	q, args, err := expiredQuery(kind)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.tx(ctx, func(tx *sql.Tx) error {
		n = 0
		lim := "$" + strconv.Itoa(len(args)+2)
		rows, err := tx.QueryContext(ctx, q+` ORDER BY updated_at LIMIT `+lim+` FOR UPDATE SKIP LOCKED`, append(append([]any{before.UnixNano()}, args...), limit)...)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			var at int64
			if err := rows.Scan(&id, &at); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		stmts := []string{`DELETE FROM delivery_attempts WHERE delivery_id = ANY($1)`, `DELETE FROM deliveries WHERE id = ANY($1)`}
		if kind == bridge.RetainJobs {
			stmts = []string{
				`DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE job_id = ANY($1))`,
				`DELETE FROM deliveries WHERE job_id = ANY($1)`, `DELETE FROM outbox WHERE job_id = ANY($1)`,
				`DELETE FROM job_history WHERE job_id = ANY($1)`, `DELETE FROM jobs WHERE id = ANY($1)`,
			}
		}
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, st, ids); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("purge %s: %w", kind, err)
	}
	return n, nil
}
