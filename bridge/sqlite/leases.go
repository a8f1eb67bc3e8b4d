package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Lease implements bridge.LeaseStore: one statement takes a free or run-out lease, or renews
// the holder's own.
func (s *Store) Lease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO leases (name, holder, until) VALUES (?,?,?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.holder = excluded.holder OR leases.until <= ?`, name, holder, now.Add(ttl).UnixNano(), now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("lease %s for %s: %w", name, holder, s.noSpace(err))
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Release implements bridge.LeaseStore.
func (s *Store) Release(ctx context.Context, name, holder string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder); err != nil {
		return fmt.Errorf("release lease %s of %s: %w", name, holder, s.noSpace(err))
	}
	return nil
}

// Leases implements bridge.LeaseStore.
func (s *Store) Leases(ctx context.Context) ([]bridge.Lease, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, holder, until FROM leases ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	defer rows.Close()
	var out []bridge.Lease
	for rows.Next() {
		var l bridge.Lease
		var until int64
		if err := rows.Scan(&l.Name, &l.Holder, &until); err != nil {
			return nil, fmt.Errorf("list leases: %w", err)
		}
		l.Until = fromNanos(until)
		out = append(out, l)
	}
	return out, rows.Err()
}
