package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var _ bridge.ExportStore = (*Store)(nil)

// ClaimRun implements bridge.ExportStore in one statement: the insert of a new (export, tick),
// or, on conflict, the update of a failed run or of a running one whose lease ran out. The
// conflicting row is locked and its condition checked again after a concurrent claim commits,
// so of any number of claimers exactly one gets a row back.
func (s *Store) ClaimRun(ctx context.Context, name string, tick, now time.Time, lease time.Duration) (bool, error) {
	err := s.db.QueryRowContext(ctx, `INSERT INTO export_runs (export, tick, status, lease_until, started_at) VALUES ($1,$2,$3,$4,$5)
		ON CONFLICT (export, tick) DO UPDATE SET status = excluded.status, lease_until = excluded.lease_until,
			started_at = excluded.started_at, error = ''
		WHERE export_runs.status = $6 OR (export_runs.status = $3 AND export_runs.lease_until < $5)
		RETURNING 1`, name, tick.UnixNano(), bridge.ExportRunning, now.Add(lease).UnixNano(), now.UnixNano(), bridge.ExportFailed).Scan(new(int))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim export %s run at %s: %w", name, tick.UTC().Format(time.RFC3339), err)
	}
	return true, nil
}

// RenewRun implements bridge.ExportStore.
func (s *Store) RenewRun(ctx context.Context, name string, tick, held, until time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE export_runs SET lease_until = $1 WHERE export = $2 AND tick = $3 AND status = $4 AND lease_until = $5`,
		until.UnixNano(), name, tick.UnixNano(), bridge.ExportRunning, held.UnixNano())
	if err != nil {
		return fmt.Errorf("renew export %s run at %s: %w", name, tick.UTC().Format(time.RFC3339), err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("renew export %s run at %s: not running under its lease: %w", name, tick.UTC().Format(time.RFC3339), bridge.ErrConflict)
	}
	return nil
}

// FinishRun implements bridge.ExportStore. A run never claimed has no row: it fails and writes
// nothing rather than the items, checkpoint and event without the run.
func (s *Store) FinishRun(ctx context.Context, r bridge.ExportRun, ids []string, advanceTo time.Time, ev bridge.Event) error {
	at := r.Tick.UTC().Format(time.RFC3339)
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE export_runs SET status = $1, lease_until = 0, window_from = $2, window_to = $3, location = $4,
			listed = $5, exported = $6, skipped = $7, error = $8, finished_at = $9 WHERE export = $10 AND tick = $11
			AND ($12::bigint = 0 OR (status = $13 AND lease_until = $12))`,
			r.Status, r.From.UnixNano(), r.Until.UnixNano(), r.Location, r.Listed, r.Exported, r.Skipped, r.Error, r.FinishedAt.UnixNano(),
			r.Export, r.Tick.UnixNano(), nanos(r.LeaseUntil), bridge.ExportRunning)
		if err != nil {
			return fmt.Errorf("finish export %s run at %s: %w", r.Export, at, err)
		}
		if n, _ := res.RowsAffected(); n == 0 && !r.LeaseUntil.IsZero() {
			return fmt.Errorf("finish export %s run at %s: not running under its lease: %w", r.Export, at, bridge.ErrConflict)
		} else if n == 0 {
			return fmt.Errorf("finish export %s run at %s: no such run (never claimed)", r.Export, at)
		}
		if len(ids) > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO export_items (export, transcription_id, tick)
				SELECT $1, id, $2 FROM unnest($3::text[]) AS id ON CONFLICT (export, transcription_id) DO NOTHING`,
				r.Export, r.Tick.UnixNano(), ids); err != nil {
				return fmt.Errorf("finish export %s run at %s: items: %w", r.Export, at, err)
			}
		}
		if !advanceTo.IsZero() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO export_checkpoints (export, until, updated_at) VALUES ($1,$2,$3)
				ON CONFLICT (export) DO UPDATE SET until = excluded.until, updated_at = excluded.updated_at
				WHERE excluded.until > export_checkpoints.until`, r.Export, advanceTo.UnixNano(), r.FinishedAt.UnixNano()); err != nil {
				return fmt.Errorf("finish export %s run at %s: checkpoint: %w", r.Export, at, err)
			}
		}
		if ev.Type != "" {
			return emit(ctx, tx, ev, r.FinishedAt)
		}
		return nil
	})
}

// Checkpoint implements bridge.ExportStore.
func (s *Store) Checkpoint(ctx context.Context, name string) (time.Time, bool, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT until FROM export_checkpoints WHERE export = $1`, name).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("checkpoint of export %s: %w", name, err)
	}
	return fromNanos(at), true, nil
}

// LastTick implements bridge.ExportStore.
func (s *Store) LastTick(ctx context.Context, name string) (time.Time, bool, error) {
	var at sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(tick) FROM export_runs WHERE export = $1`, name).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("last tick of export %s: %w", name, err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return fromNanos(at.Int64), true, nil
}

// Runs implements bridge.ExportStore.
func (s *Store) Runs(ctx context.Context, name string, limit int) ([]bridge.ExportRun, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.db.QueryContext(ctx, `SELECT export, tick, status, window_from, window_to, location, listed, exported, skipped, error,
		started_at, finished_at, lease_until FROM export_runs WHERE ($1::text = '' OR export = $1) ORDER BY tick DESC, export LIMIT $2`, name, limit)
	out, err := collect(rows, err, func(row scanner) (bridge.ExportRun, error) {
		var r bridge.ExportRun
		var tick, from, to, started, finished, lease int64
		err := row.Scan(&r.Export, &tick, &r.Status, &from, &to, &r.Location, &r.Listed, &r.Exported, &r.Skipped, &r.Error,
			&started, &finished, &lease)
		r.Tick, r.From, r.Until, r.StartedAt, r.FinishedAt = fromNanos(tick), fromNanos(from), fromNanos(to), fromNanos(started), fromNanos(finished)
		r.LeaseUntil = fromNanos(lease)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("export runs: %w", err)
	}
	return out, nil
}

// SourceOf implements bridge.ExportStore.
func (s *Store) SourceOf(ctx context.Context, transcriptionID string) (string, error) {
	var src string
	err := s.db.QueryRowContext(ctx, `SELECT source FROM jobs WHERE transcription_id = $1 ORDER BY seq LIMIT 1`, transcriptionID).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("source of transcription %s: %w", transcriptionID, err)
	}
	return src, nil
}

// Exported implements bridge.ExportStore.
func (s *Store) Exported(ctx context.Context, name string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT transcription_id FROM export_items WHERE export = $1 AND transcription_id = ANY($2)`, name, ids)
	found, err := collect(rows, err, func(r scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	if err != nil {
		return nil, fmt.Errorf("exported by %s: %w", name, err)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
