package sqlbus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// reader is one Subscribe call: it competes for its group's lease and hands out messages one
// at a time, in offset order.
type reader struct {
	s      *Subscriber
	topic  string
	holder string
	out    chan *message.Message
	log    watermill.LoggerAdapter
	held   bool              // whether this reader may hold the lease (released only then)
	acked  *watermillsql.Row // the last acked row whose position is not yet written (nil: none)
}

// errLeaseLost stops a batch whose lease another reader took over; the acks not yet written
// (by flush, or by the next read: claim) do not count, and the new holder reads them again.
var errLeaseLost = errors.New("lease lost")

func (r *reader) run(ctx context.Context) {
	defer r.release()
	defer r.flush(context.WithoutCancel(ctx))
	full := false // the last read took a whole batch: more is likely waiting
	for {
		nudged := r.s.woken() // taken before the look: a nudge during it ends the wait below
		rows, err := r.claim(ctx, full)
		full = err == nil && len(rows) == r.s.cfg.BatchSize
		wait := time.Duration(0)
		switch {
		case errors.Is(err, errLeaseLost):
			wait = r.s.cfg.PollInterval // another reader has the group: look again later
		case err != nil:
			if ctx.Err() == nil {
				r.log.Error("Cannot read messages", err, nil)
			}
			wait = r.s.cfg.RetryInterval
		case len(rows) == 0:
			wait = r.s.cfg.PollInterval
		}
		deliver := r.deliverInOrder
		if r.s.cfg.InFlight > 1 {
			deliver = r.deliverWindow
		}
		if err := deliver(ctx, rows); err != nil && !errors.Is(err, errLeaseLost) && !r.stopping(ctx) {
			r.log.Error("Cannot ack message", err, nil)
			wait = r.s.cfg.RetryInterval
		}
		if r.stopping(ctx) {
			return
		}
		if wait > 0 || !full {
			// Going to wait (or to look first): the acks are written now. Otherwise the next
			// read writes them in its own transaction, one write for both.
			if err := r.flush(ctx); err != nil && !errors.Is(err, errLeaseLost) && !r.stopping(ctx) {
				r.log.Error("Cannot ack messages", err, nil)
				wait = r.s.cfg.RetryInterval
			}
		}
		if wait > 0 {
			r.release() // let another reader of the group in while this one waits
			select {
			case <-ctx.Done():
				return
			case <-r.s.closing:
				return
			case <-time.After(wait):
			case <-nudged: // new messages from this process
			}
		}
	}
}

func (r *reader) stopping(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-r.s.closing:
		return true
	default:
		return false
	}
}

func (r *reader) exec(ctx context.Context, db execer, q watermillsql.Query) (int64, error) {
	res, err := db.ExecContext(ctx, q.Query, q.Args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// claim takes the group's lease and reads the next batch in one short transaction, which
// also writes the acks not yet written (flush's, folded in: one write for both). It returns
// nothing without writing when there is nothing to read, or when another reader holds the
// lease; with acks to write, a lease lost since is errLeaseLost (those acks do not count, and
// the messages are read again). After a full batch (more) it reads without looking first.
func (r *reader) claim(ctx context.Context, more bool) ([]watermillsql.Row, error) {
	now := time.Now()
	if !more {
		// A read first: no write transaction while there is nothing to read or another
		// reader holds a live lease.
		var pending bool
		q := r.s.dialect.PendingQuery(r.topic, r.s.cfg.ConsumerGroup, r.holder, now.UnixNano())
		err := r.s.db.QueryRowContext(ctx, q.Query, q.Args...).Scan(&pending)
		if err != nil || !pending {
			return nil, err
		}
	}
	tx, err := r.s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := r.readIn(ctx, tx, now)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return nil, err // the acks not written stay noted (unless the lease was lost)
	}
	r.acked = nil // written
	return rows, nil
}

// readIn is claim's transaction: the acks not yet written (under the lease: errLeaseLost,
// and they are dropped, when another reader has taken it), the lease, and the next batch
// (nothing when the lease is another reader's).
func (r *reader) readIn(ctx context.Context, tx *sql.Tx, now time.Time) ([]watermillsql.Row, error) {
	until := now.Add(r.s.cfg.Lease).UnixNano()
	if r.acked != nil {
		n, err := r.exec(ctx, tx, r.s.dialect.LeasedAckQuery(r.topic, r.s.cfg.ConsumerGroup, r.holder, *r.acked, until))
		if err != nil {
			return nil, fmt.Errorf("ack offset %d: %w", r.acked.Offset, err)
		}
		if n == 0 {
			r.acked = nil // they do not count: the new holder reads those messages again
			return nil, errLeaseLost
		}
	}
	n, err := r.exec(ctx, tx, r.s.dialect.ClaimQuery(r.topic, r.s.cfg.ConsumerGroup, r.holder, now.UnixNano(), until))
	if err != nil || n == 0 {
		return nil, err // n == 0: the lease is another reader's
	}
	r.held = true
	q, err := r.s.schema.SelectQuery(watermillsql.SelectQueryParams{Topic: r.topic, ConsumerGroup: r.s.cfg.ConsumerGroup, OffsetsAdapter: r.s.offsets})
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, q.Query, q.Args...)
	if err != nil {
		return nil, err
	}
	var out []watermillsql.Row
	for rows.Next() {
		row, err := r.s.schema.UnmarshalMessage(watermillsql.UnmarshalMessageParams{Row: rows})
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, row)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// deliverInOrder hands rows out one at a time, each until it is acked.
func (r *reader) deliverInOrder(ctx context.Context, rows []watermillsql.Row) error {
	for _, row := range rows {
		if err := r.deliver(ctx, row); err != nil {
			return fmt.Errorf("offset %d: %w", row.Offset, err)
		}
	}
	return nil
}

// deliver hands row out until it is acked (resending after a nack), renewing the lease while
// the handler works, and notes the ack for flush. It returns errLeaseLost, or ctx's error when
// the subscription ends first.
func (r *reader) deliver(ctx context.Context, row watermillsql.Row) error {
	renew := time.NewTicker(r.s.cfg.Lease / 3)
	defer renew.Stop()
	for {
		msg := row.Msg.Copy()
		mctx, cancel := context.WithCancel(ctx)
		msg.SetContext(mctx)
		acked, err := r.handOut(ctx, msg, renew.C)
		cancel()
		if err != nil {
			return err
		}
		if acked {
			r.acked = &row // written by the next read (claim) or flush, or sooner with a lease renewal
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.s.closing:
			return ErrClosed
		case <-time.After(r.s.cfg.ResendInterval):
		}
	}
}

// handOut sends msg and waits for its ack (true) or nack (false).
func (r *reader) handOut(ctx context.Context, msg *message.Message, renew <-chan time.Time) (bool, error) {
	sent := false
	for {
		var out chan *message.Message
		if !sent {
			out = r.out
		}
		select {
		case out <- msg:
			sent = true
		case <-msg.Acked():
			return true, nil
		case <-msg.Nacked():
			return false, nil
		case <-renew:
			if err := r.renew(ctx); err != nil {
				return false, err
			}
		case <-ctx.Done():
			return false, ctx.Err()
		case <-r.s.closing:
			return false, ErrClosed
		}
	}
}

func (r *reader) renew(ctx context.Context) error {
	if r.acked != nil {
		return r.flush(ctx)
	}
	if err := r.renewLease(ctx); err != nil && !errors.Is(err, errLeaseLost) {
		return fmt.Errorf("renew lease: %w", err)
	} else if err != nil {
		return err
	}
	return nil
}

// flush writes the acked offset (renewing the lease) in a transaction of its own, before the
// reader waits or stops (under a backlog the next read writes it: claim). After a crash the
// acked messages not yet written are read again: delivery is at least once either way.
func (r *reader) flush(ctx context.Context) error {
	if r.acked == nil {
		return nil
	}
	last := *r.acked
	r.acked = nil
	until := time.Now().Add(r.s.cfg.Lease).UnixNano()
	n, err := r.exec(ctx, r.s.db, r.s.dialect.LeasedAckQuery(r.topic, r.s.cfg.ConsumerGroup, r.holder, last, until))
	if err != nil {
		return fmt.Errorf("ack offset %d: %w", last.Offset, err)
	}
	if n == 0 {
		return errLeaseLost
	}
	return nil
}

// release gives the lease up (if held), so the group does not wait for it to expire.
func (r *reader) release() {
	if !r.held {
		return
	}
	r.held = false
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.exec(ctx, r.s.db, r.s.dialect.ReleaseQuery(r.topic, r.s.cfg.ConsumerGroup, r.holder)); err != nil && !errors.Is(err, sql.ErrConnDone) {
		r.log.Error("Cannot release lease", err, nil)
	}
}
