package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

var _ bridge.JobStore = (*Store)(nil)

// jobCols are the columns scanJob reads; revision is bridge.Job.Revision, the count of the
// job's writes ("version" is the recording's).
const jobCols = `id, recording, state, reason, hold, author, external_id, metadata, idempotency_key, attempt_at, attempts,
	transcription_id, required_minutes, next_at, created_at, updated_at, revision`

func scanJob(row scanner) (*bridge.Job, error) {
	var j bridge.Job
	var rec, meta string
	var attemptAt, nextAt, created, updated int64
	if err := row.Scan(&j.ID, &rec, &j.State, &j.Reason, &j.Hold, &j.Author, &j.ExternalID, &meta, &j.IdempotencyKey, &attemptAt,
		&j.Attempts, &j.TranscriptionID, &j.RequiredMinutes, &nextAt, &created, &updated, &j.Revision); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(rec), &j.Recording); err != nil {
		return nil, fmt.Errorf("job %s: recording: %w", j.ID, err)
	}
	if meta != "" {
		j.Metadata = json.RawMessage(meta)
	}
	j.AttemptAt, j.NextAt = fromNanos(attemptAt), fromNanos(nextAt)
	j.CreatedAt, j.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &j, nil
}

// AddRecordings implements bridge.JobStore: INSERT … ON CONFLICT DO NOTHING on either unique
// key, (source, item, version) or the recording's dedupe key (migration 0013), so of concurrent
// sightings on any number of replicas, by one source or several, exactly one creates the job
// (the others wait for its commit and then insert nothing). A recording a tombstone names (its
// source item, any version, or its dedupe key) is left out.
func (s *Store) AddRecordings(ctx context.Context, source string, recs []connectors.Recording, cursor string, now time.Time) ([]bridge.Job, error) {
	var added []bridge.Job
	err := s.tx(ctx, func(tx *sql.Tx) error {
		added = added[:0]
		for _, r := range recs {
			r.Source = source
			j := bridge.Job{ID: uuid.Must(uuid.NewV7()).String(), Recording: r, State: bridge.StateDiscovered, CreatedAt: now.UTC(), UpdatedAt: now.UTC(), Revision: 1}
			rec, _ := json.Marshal(r)
			if gone, err := tombstoned(ctx, tx, source, r.ItemID, r.DedupeKey); err != nil || gone {
				if err != nil {
					return fmt.Errorf("add %s %s: tombstones: %w", source, r.ItemID, err)
				}
				continue // forgotten: never stored again
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, source, item_id, version, recording, state, created_at, updated_at)
				VALUES ($1,$2,$3,$4,$5,$6,$7,$7) ON CONFLICT DO NOTHING`,
				j.ID, source, r.ItemID, r.Version, string(rec), j.State, now.UnixNano())
			if err != nil {
				return fmt.Errorf("add %s %s: %w", source, r.ItemID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO job_history (job_id, from_state, to_state, reason, at) VALUES ($1,'',$2,$3,$4)`,
					j.ID, j.State, "found by "+source, now.UnixNano()); err != nil {
					return fmt.Errorf("add %s %s: history: %w", source, r.ItemID, err)
				}
				added = append(added, j)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cursors (source, cursor, updated_at) VALUES ($1,$2,$3)
			ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`, source, cursor, now.UnixNano()); err != nil {
			return fmt.Errorf("set the cursor of %s: %w", source, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// Cursor implements bridge.JobStore.
func (s *Store) Cursor(ctx context.Context, source string) (string, error) {
	var c string
	err := s.db.QueryRowContext(ctx, `SELECT cursor FROM cursors WHERE source = $1`, source).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cursor of %s: %w", source, err)
	}
	return c, nil
}

// Update implements bridge.JobStore: one conditional UPDATE (state and, unless j.Revision is 0,
// revision); a concurrent writer of the same job waits for the row lock and then finds the
// condition false (ErrConflict).
func (s *Store) Update(ctx context.Context, j *bridge.Job, from bridge.State, reason string, events ...bridge.Event) error {
	now := j.UpdatedAt
	if now.IsZero() {
		now = time.Now().UTC()
	}
	rec, _ := json.Marshal(j.Recording)
	var committed int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE jobs SET recording = $1, state = $2, reason = $3, hold = $4, author = $5, external_id = $6,
			metadata = $7, idempotency_key = $8, attempt_at = $9, attempts = $10, transcription_id = $11, required_minutes = $12,
			next_at = $13, updated_at = $14, revision = revision + 1
			WHERE id = $15 AND state = $16 AND ($17::bigint = 0 OR revision = $17) RETURNING revision`,
			string(rec), j.State, j.Reason, j.Hold, j.Author, j.ExternalID, string(j.Metadata), j.IdempotencyKey, nanos(j.AttemptAt),
			j.Attempts, j.TranscriptionID, j.RequiredMinutes, nanos(j.NextAt), now.UnixNano(), j.ID, from, j.Revision).Scan(&committed)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("update job %s from %s (revision %d): %w", j.ID, from, j.Revision, bridge.ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("update job %s: %w", j.ID, err)
		}
		if from != j.State || reason != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO job_history (job_id, from_state, to_state, reason, at) VALUES ($1,$2,$3,$4,$5)`,
				j.ID, from, j.State, reason, now.UnixNano()); err != nil {
				return fmt.Errorf("update job %s: history: %w", j.ID, err)
			}
		}
		for _, e := range events {
			if err := emit(ctx, tx, e, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		j.Revision = committed
	}
	return err
}

// Job implements bridge.JobStore.
func (s *Store) Job(ctx context.Context, id string) (*bridge.Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %s: %w", id, bridge.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return j, nil
}

// Jobs implements bridge.JobStore: oldest first, ties in the order added (the seq identity).
func (s *Store) Jobs(ctx context.Context, f bridge.JobFilter) ([]bridge.Job, error) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		arg("state = ANY($?)", states)
	}
	if f.Source != "" {
		arg("source = $?", f.Source)
	}
	if !f.DueBefore.IsZero() {
		arg("next_at <= $?", f.DueBefore.UnixNano())
	}
	if f.Query != "" {
		arg(jobQuery, containsPattern(f.Query))
	}
	q := `SELECT ` + jobCols + ` FROM jobs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, seq"
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	out, err := collect(rows, err, func(r scanner) (bridge.Job, error) {
		j, err := scanJob(r)
		if err != nil {
			return bridge.Job{}, err
		}
		return *j, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// History implements bridge.JobStore.
func (s *Store) History(ctx context.Context, id string) ([]bridge.Change, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT from_state, to_state, reason, at FROM job_history WHERE job_id = $1 ORDER BY seq`, id)
	out, err := collect(rows, err, func(r scanner) (bridge.Change, error) {
		c := bridge.Change{JobID: id}
		var at int64
		err := r.Scan(&c.From, &c.To, &c.Reason, &at)
		c.At = fromNanos(at)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", id, err)
	}
	return out, nil
}

// Counts implements bridge.JobStore.
func (s *Store) Counts(ctx context.Context) (map[bridge.State]int, error) {
	type count struct {
		state bridge.State
		n     int
	}
	rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
	counts, err := collect(rows, err, func(r scanner) (count, error) {
		var c count
		return c, r.Scan(&c.state, &c.n)
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	out := map[bridge.State]int{}
	for _, c := range counts {
		out[c.state] = c.n
	}
	return out, nil
}

// InstanceID implements bridge.JobStore: one upsert that returns the stored id, so concurrent
// first uses on any replica agree.
func (s *Store) InstanceID(ctx context.Context) (string, error) {
	var id string
	if err := s.db.QueryRowContext(ctx, `INSERT INTO meta (key, value) VALUES ('instance_id', $1)
		ON CONFLICT (key) DO UPDATE SET value = meta.value RETURNING value`, uuid.NewString()).Scan(&id); err != nil {
		return "", fmt.Errorf("instance id: %w", err)
	}
	return id, nil
}
