package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/transcript-bridge/bridge/bridge"
)

// Commit implements bridge.DeliveryStore: records, fan-outs and claims of b in one transaction,
// in that order. An item's outcome (a record's ErrConflict or ErrDeliveryNotFound, a fan-out's
// ErrUnknownEvent) is found without a failed statement, which would abort the transaction.
// s.tx runs the lot again on a deadlock or serialization failure: each run sets every item's
// result afresh, so none is left from a run rolled back.
func (s *Store) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		reset(b)
		for _, d := range b.Releases {
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = 0 WHERE id = $1 AND lease_until = $2`,
				d.ID, nanos(d.LeaseUntil)); err != nil {
				return fmt.Errorf("release delivery %s: %w", d.ID, err)
			}
		}
		for i := range b.Records {
			r := &b.Records[i]
			var err error
			if r.Err, err = record(ctx, tx, r.Delivery, r.Attempt); err != nil {
				return err
			}
		}
		for i := range b.FanOuts {
			f := &b.FanOuts[i]
			err := fanOut(ctx, tx, f.Ref, f.Endpoints, b.Now)
			if errors.Is(err, bridge.ErrUnknownEvent) {
				f.Err = err // nothing of it was written: the UPDATE changed no row
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
		reset(b) // nothing was written: no item has an outcome
		return fmt.Errorf("commit a delivery batch (%d records, %d events, %d claims): %w", len(b.Records), len(b.FanOuts), len(b.Claims), err)
	}
	return nil
}

// reset clears the results of b's items.
func reset(b *bridge.DeliveryBatch) {
	for i := range b.Records {
		b.Records[i].Err = nil
	}
	for i := range b.FanOuts {
		b.FanOuts[i].Err = nil
	}
	for i := range b.Claims {
		b.Claims[i].Claimed = nil
	}
}
