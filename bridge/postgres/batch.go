package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/transcript-bridge/bridge/bridge"
)

// Commit implements bridge.DeliveryStore: releases, records, claims' searches and fan-outs of b
// in one transaction, in that order; a claim's room left after its search takes the batch's new
// deliveries, leased as they are written (bridge.FanOutAll). An item's outcome (a record's ErrConflict
// or ErrDeliveryNotFound, a fan-out's ErrUnknownEvent) is found without a failed statement,
// which would abort the transaction.
// s.tx runs the lot again on a deadlock or serialization failure: each run sets every item's
// result afresh, so none is left from a run rolled back.
func (s *Store) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		reset(b)
		// A batch without fan-outs (records, claims, releases) need not wait for the WAL
		// flush: lost with the log's last moments in a crash of the server, its deliveries
		// are only claimed and sent again, with the webhook-ids they have. A fan-out waits:
		// its deliveries are sent as soon as it returns, and one lost would be made again
		// with new webhook-ids.
		if len(b.FanOuts) == 0 {
			if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
				return fmt.Errorf("set synchronous_commit: %w", err)
			}
		}
		for _, d := range b.Releases {
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = 0, next_attempt_at = LEAST(next_attempt_at, $3)
				WHERE id = $1 AND lease_until = $2`, d.ID, nanos(d.LeaseUntil), b.Now.UnixNano()); err != nil {
				return fmt.Errorf("release delivery %s: %w", d.ID, err)
			}
		}
		if len(b.Records) > 0 {
			if err := recordAll(ctx, tx, b.Records); err != nil {
				return err
			}
		}
		// The searches first: older work before the new (the batch's own events still count
		// as not fanned out, so their jobs' later deliveries wait), then the fan-outs, whose
		// new deliveries fill the room left.
		for i := range b.Claims {
			c := &b.Claims[i]
			if c.FanOutsOnly {
				continue
			}
			var err error
			if c.Claimed, err = claim(ctx, tx, c.Endpoint, b.Now, c.Lease, c.Limit); err != nil {
				return fmt.Errorf("claim deliveries of %q: %w", c.Endpoint, err)
			}
		}
		if err := bridge.FanOutAll(ctx, fanOutTx{tx}, b.FanOuts, b.Now, b.Claims); err != nil {
			return err
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
