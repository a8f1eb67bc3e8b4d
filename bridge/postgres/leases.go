package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Lease implements bridge.LeaseStore: one statement takes a free or run-out lease, or renews
// the holder's own. The conflicting row is locked and its condition checked again after a
// concurrent taker commits, so of takers on any number of replicas one gets it.
func (s *Store) Lease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO leases (name, holder, until) VALUES ($1,$2,$3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.holder = excluded.holder OR leases.until <= $4`, name, holder, now.Add(ttl).UnixNano(), now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("lease %s for %s: %w", name, holder, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("lease %s for %s: %w", name, holder, err)
	}
	return n == 1, nil
}

// Release implements bridge.LeaseStore.
func (s *Store) Release(ctx context.Context, name, holder string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder); err != nil {
		return fmt.Errorf("release lease %s of %s: %w", name, holder, err)
	}
	return nil
}

// Leases implements bridge.LeaseStore.
func (s *Store) Leases(ctx context.Context) ([]bridge.Lease, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, holder, until FROM leases ORDER BY name`)
	out, err := collect(rows, err, func(r scanner) (bridge.Lease, error) {
		var l bridge.Lease
		var until int64
		err := r.Scan(&l.Name, &l.Holder, &until)
		l.Until = fromNanos(until)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}
