package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// NoteMappingChange implements bridge.JobStore.
func (s *Store) NoteMappingChange(ctx context.Context, reason string, now time.Time) (bridge.MappingChange, error) {
	var ch bridge.MappingChange
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE mapping_changes SET generation = generation + 1, reason = ?, changed_at = ? WHERE id = 1`,
			reason, now.UnixNano()); err != nil {
			return err
		}
		return scanMappingChange(tx.QueryRowContext(ctx, `SELECT generation, reason, changed_at FROM mapping_changes WHERE id = 1`), &ch)
	})
	if err != nil {
		return bridge.MappingChange{}, fmt.Errorf("note mapping change: %w", err)
	}
	return ch, nil
}

// LastMappingChange implements bridge.JobStore.
func (s *Store) LastMappingChange(ctx context.Context) (bridge.MappingChange, error) {
	var ch bridge.MappingChange
	if err := scanMappingChange(s.db.QueryRowContext(ctx, `SELECT generation, reason, changed_at FROM mapping_changes WHERE id = 1`), &ch); err != nil {
		return bridge.MappingChange{}, fmt.Errorf("last mapping change: %w", err)
	}
	return ch, nil
}

func scanMappingChange(row *sql.Row, ch *bridge.MappingChange) error {
	var at int64
	if err := row.Scan(&ch.Generation, &ch.Reason, &at); err != nil {
		return err
	}
	ch.At = fromNanos(at)
	return nil
}
