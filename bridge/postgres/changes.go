package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// NoteMappingChange implements bridge.JobStore in one UPDATE … RETURNING: concurrent changes on
// any replica each wait for the row lock and each count.
func (s *Store) NoteMappingChange(ctx context.Context, reason string, now time.Time) (bridge.MappingChange, error) {
	var ch bridge.MappingChange
	if err := scanMappingChange(s.db.QueryRowContext(ctx, `UPDATE mapping_changes SET generation = generation + 1, reason = $1, changed_at = $2
		WHERE id = 1 RETURNING generation, reason, changed_at`, reason, now.UnixNano()), &ch); err != nil {
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

func scanMappingChange(row scanner, ch *bridge.MappingChange) error {
	var at int64
	if err := row.Scan(&ch.Generation, &ch.Reason, &at); err != nil {
		return err
	}
	ch.At = fromNanos(at)
	return nil
}
