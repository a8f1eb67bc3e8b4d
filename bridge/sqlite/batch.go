package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/transcript-bridge/bridge/bridge"
)

// Commit implements bridge.DeliveryStore: records, fan-outs and claims of b in one
// transaction (one fsync for the lot), in that order.
func (s *Store) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for i := range b.Records {
			r := &b.Records[i]
			var err error
			if r.Err, err = record(ctx, tx, r.Delivery, r.Attempt); err != nil {
				return err
			}
		}
		for i := range b.FanOuts {
			f := &b.FanOuts[i]
			f.Err = nil
			err := fanOut(ctx, tx, f.Ref, f.Endpoints, b.Now)
			if errors.Is(err, bridge.ErrUnknownEvent) {
				f.Err = err // nothing of it was written: the statement changed no row
			} else if err != nil {
				return err
			}
		}
		for i := range b.Claims {
			c := &b.Claims[i]
			var err error
			if c.Claimed, err = claim(ctx, tx, c.Endpoint, b.Now, c.Lease, c.Limit); err != nil {
				return fmt.Errorf("claim deliveries of %q: %w", c.Endpoint, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit a delivery batch (%d records, %d events, %d claims): %w", len(b.Records), len(b.FanOuts), len(b.Claims), err)
	}
	return nil
}
