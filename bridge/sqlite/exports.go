package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var _ bridge.ExportStore = (*Store)(nil)

// ClaimRun implements bridge.ExportStore.
func (s *Store) ClaimRun(ctx context.Context, name string, tick, now time.Time, lease time.Duration) (bool, error) {
	var claimed bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO export_runs (export, tick, status, lease_until, started_at) VALUES (?,?,?,?,?)
			ON CONFLICT (export, tick) DO NOTHING`, name, tick.UnixNano(), bridge.ExportRunning, now.Add(lease).UnixNano(), now.UnixNano())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			claimed = true
			return nil
		}
		res, err = tx.ExecContext(ctx, `UPDATE export_runs SET status = ?, lease_until = ?, started_at = ?, error = ''
			WHERE export = ? AND tick = ? AND (status = ? OR (status = ? AND lease_until < ?))`,
			bridge.ExportRunning, now.Add(lease).UnixNano(), now.UnixNano(), name, tick.UnixNano(), bridge.ExportFailed, bridge.ExportRunning, now.UnixNano())
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		claimed = n == 1
		return nil
	})
	return claimed, err
}

// RenewRun implements bridge.ExportStore.
func (s *Store) RenewRun(ctx context.Context, name string, tick, held, until time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE export_runs SET lease_until = ? WHERE export = ? AND tick = ? AND status = ? AND lease_until = ?`,
		until.UnixNano(), name, tick.UnixNano(), bridge.ExportRunning, held.UnixNano())
	if err != nil {
		return fmt.Errorf("renew export %s run at %s: %w", name, tick.UTC().Format(time.RFC3339), err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("renew export %s run at %s: not running under its lease: %w", name, tick.UTC().Format(time.RFC3339), bridge.ErrConflict)
	}
	return nil
}

// FinishRun implements bridge.ExportStore.
func (s *Store) FinishRun(ctx context.Context, r bridge.ExportRun, ids []string, advanceTo time.Time, ev bridge.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE export_runs SET status = ?, lease_until = 0, window_from = ?, window_to = ?, location = ?,
			listed = ?, exported = ?, skipped = ?, error = ?, finished_at = ? WHERE export = ? AND tick = ?
			AND (? = 0 OR (status = ? AND lease_until = ?))`,
			r.Status, r.From.UnixNano(), r.Until.UnixNano(), r.Location, r.Listed, r.Exported, r.Skipped, r.Error, r.FinishedAt.UnixNano(),
			r.Export, r.Tick.UnixNano(), nanos(r.LeaseUntil), bridge.ExportRunning, nanos(r.LeaseUntil))
		if err != nil {
			return err
		}
		// A run never claimed has no row: write nothing rather than its items, checkpoint and
		// event without the run; nor for a runner whose claim another one took over.
		if n, _ := res.RowsAffected(); n == 0 && !r.LeaseUntil.IsZero() {
			return fmt.Errorf("finish export %s run at %s: not running under its lease: %w", r.Export, r.Tick.UTC().Format(time.RFC3339), bridge.ErrConflict)
		} else if n == 0 {
			return fmt.Errorf("finish export %s run at %s: no such run (never claimed)", r.Export, r.Tick.UTC().Format(time.RFC3339))
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO export_items (export, transcription_id, tick) VALUES (?,?,?)
				ON CONFLICT (export, transcription_id) DO NOTHING`, r.Export, id, r.Tick.UnixNano()); err != nil {
				return err
			}
		}
		if !advanceTo.IsZero() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO export_checkpoints (export, until, updated_at) VALUES (?,?,?)
				ON CONFLICT (export) DO UPDATE SET until = excluded.until, updated_at = excluded.updated_at WHERE excluded.until > until`,
				r.Export, advanceTo.UnixNano(), r.FinishedAt.UnixNano()); err != nil {
				return err
			}
		}
		if ev.Type != "" {
			return s.emit(ctx, tx, ev, r.FinishedAt)
		}
		return nil
	})
}

// Checkpoint implements bridge.ExportStore.
func (s *Store) Checkpoint(ctx context.Context, name string) (time.Time, bool, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT until FROM export_checkpoints WHERE export = ?`, name).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return fromNanos(at), err == nil, err
}

// LastTick implements bridge.ExportStore.
func (s *Store) LastTick(ctx context.Context, name string) (time.Time, bool, error) {
	var at sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MAX(tick) FROM export_runs WHERE export = ?`, name).Scan(&at)
	if err != nil || !at.Valid {
		return time.Time{}, false, err
	}
	return fromNanos(at.Int64), true, nil
}

// Runs implements bridge.ExportStore.
func (s *Store) Runs(ctx context.Context, name string, limit int) ([]bridge.ExportRun, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.db.QueryContext(ctx, `SELECT export, tick, status, window_from, window_to, location, listed, exported, skipped, error,
		started_at, finished_at, lease_until FROM export_runs WHERE (? = '' OR export = ?) ORDER BY tick DESC LIMIT ?`, name, name, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []bridge.ExportRun
	for rows.Next() {
		var r bridge.ExportRun
		var tick, from, to, started, finished, lease int64
		if err := rows.Scan(&r.Export, &tick, &r.Status, &from, &to, &r.Location, &r.Listed, &r.Exported, &r.Skipped, &r.Error,
			&started, &finished, &lease); err != nil {
			return nil, err
		}
		r.Tick, r.From, r.Until, r.StartedAt, r.FinishedAt = fromNanos(tick), fromNanos(from), fromNanos(to), fromNanos(started), fromNanos(finished)
		r.LeaseUntil = fromNanos(lease)
		out = append(out, r)
	}
	return out, rows.Err()
}

// SourceOf implements bridge.ExportStore.
func (s *Store) SourceOf(ctx context.Context, transcriptionID string) (string, error) {
	var src string
	err := s.db.QueryRowContext(ctx, `SELECT source FROM jobs WHERE transcription_id = ? LIMIT 1`, transcriptionID).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return src, err
}

// Exported implements bridge.ExportStore.
func (s *Store) Exported(ctx context.Context, name string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := []any{name}
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT transcription_id FROM export_items WHERE export = ? AND transcription_id IN (?`+
			strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = true
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	return out, nil
}
