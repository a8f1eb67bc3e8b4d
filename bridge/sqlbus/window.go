package sqlbus

import (
	"context"
	"time"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// deliverWindow hands rows out in offset order, up to InFlight not yet acked at once, hands a
// nacked one out again after ResendInterval, and renews the lease while it waits. It notes for
// flush the offset below which every row is acked, also when it stops early (the rest is read
// again). It returns errLeaseLost, or ctx's error when the subscription ends first.
func (r *reader) deliverWindow(ctx context.Context, rows []watermillsql.Row) error {
	answers := make(chan answer, len(rows))
	resend := make(chan int, len(rows))
	acked := make([]bool, len(rows))
	defer func() {
		for i := range rows {
			if !acked[i] {
				break
			}
			r.acked = &rows[i]
		}
	}()
	renew := time.NewTicker(r.s.cfg.Lease / 3)
	defer renew.Stop()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the waiters and the resend timers
	// send hands row i out and starts a waiter for its answer.
	send := func(i int) error {
		msg := rows[i].Msg.Copy()
		mctx, done := context.WithCancel(wctx) // ends with the message's answer, as in Subscribe
		msg.SetContext(mctx)
		for {
			select {
			case r.out <- msg:
				go awaitAnswer(wctx, msg, i, answers, done)
				return nil
			case <-renew.C:
				if err := r.renewLease(ctx); err != nil {
					done()
					return err
				}
			case <-ctx.Done():
				done()
				return ctx.Err()
			case <-r.s.closing:
				done()
				return ErrClosed
			}
		}
	}
	next, open := 0, 0
	for {
		for next < len(rows) && open < r.s.cfg.InFlight {
			if err := send(next); err != nil {
				return err
			}
			next, open = next+1, open+1
		}
		if open == 0 {
			return nil
		}
		select {
		case a := <-answers:
			if a.acked {
				acked[a.i], open = true, open-1
				continue
			}
			go resendAfter(wctx, r.s.cfg.ResendInterval, a.i, resend)
		case i := <-resend:
			if err := send(i); err != nil {
				return err
			}
		case <-renew.C:
			if err := r.renewLease(ctx); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-r.s.closing:
			return ErrClosed
		}
	}
}

// answer is a handler's answer to the message of row i.
type answer struct {
	i     int
	acked bool
}

// awaitAnswer reports m's ack or nack (as row i) on answers, unless ctx ends first; then it
// ends m's context (done).
func awaitAnswer(ctx context.Context, m *message.Message, i int, answers chan<- answer, done context.CancelFunc) {
	defer done()
	select {
	case <-m.Acked():
		answers <- answer{i, true}
	case <-m.Nacked():
		answers <- answer{i, false}
	case <-ctx.Done():
	}
}

// resendAfter asks for row i to be handed out again after wait, unless ctx ends first.
func resendAfter(ctx context.Context, wait time.Duration, i int, resend chan<- int) {
	select {
	case <-time.After(wait):
		resend <- i
	case <-ctx.Done():
	}
}

// renewLease extends the group's lease without moving the offset (deliverWindow notes its
// offset only at the end).
func (r *reader) renewLease(ctx context.Context) error {
	now := time.Now()
	n, err := r.exec(ctx, r.s.db, r.s.dialect.ClaimQuery(r.topic, r.s.cfg.ConsumerGroup, r.holder, now.UnixNano(), now.Add(r.s.cfg.Lease).UnixNano()))
	if err != nil {
		return err
	}
	if n == 0 {
		return errLeaseLost
	}
	return nil
}
