package relay

import (
	"context"
	"time"
)

// Fan-out admission. An event fanned out to a lane with no room left is written without a
// lease: its delivery waits in the store until a search finds it, a read and a second write
// that cost about 1.6 times a fan-out's leased write (BenchmarkGroupCommit in bridge/sqlite).
// Under a backlog the bus brings events faster than the lanes send them, so about half the
// deliveries went that way. So before an event is gathered for the group commit, its fan-out
// waits while one of its endpoints' lanes is full and draining: that lane's records free room
// within milliseconds, and the event stays in the outbox meanwhile. A lane that has recorded
// nothing for drainingWithin (an endpoint timing out, a slow one) never holds an event back:
// its deliveries wait in the store, the other endpoints' do not wait for it.
const (
	// drainingWithin is how recently a lane must have recorded an attempt to hold fan-outs
	// back; a lane at full pace records every millisecond or so.
	drainingWithin = 5 * time.Millisecond
	// admitPoll is how often held-back fan-outs look again when no commit made room.
	admitPoll = 2 * time.Millisecond
)

// admit gathers req for the next group commit once none of its endpoints' lanes is full and
// draining; it fails with ctx's error if ctx ends first. The room is counted as it is gathered
// (fanning), so fan-outs admitted together do not overfill a lane.
func (e *engine) admit(ctx context.Context, req fanOutReq) error {
	for {
		e.mu.Lock()
		if !e.full(req.item.Endpoints) {
			for _, name := range req.item.Endpoints {
				if l := e.lanes[name]; l != nil {
					e.gather(l)
					l.fanning++
				}
			}
			e.fanOuts = append(e.fanOuts, req)
			e.mu.Unlock()
			return nil
		}
		room := e.room
		e.heldBack++
		if e.poll == nil {
			e.poll = time.AfterFunc(admitPoll, e.pollHeld)
		}
		e.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
		}
		e.mu.Lock()
		e.heldBack--
		e.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// pollHeld wakes the held-back fan-outs every admitPoll while there are some, one timer for
// all: a lane that stops recording no longer holds them, though no commit makes room.
func (e *engine) pollHeld() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.heldBack == 0 {
		e.poll = nil
		return
	}
	e.roomMade()
	e.poll.Reset(admitPoll)
}

// full reports whether one of endpoints' lanes holds, or is about to hold, as many deliveries
// as it may while it records attempts. e.mu is held.
func (e *engine) full(endpoints []string) bool {
	if e.stopped {
		return false
	}
	now := time.Now()
	for _, name := range endpoints {
		l := e.lanes[name]
		if l != nil && l.held+l.fanning+l.committing >= l.capacity && now.Sub(l.recorded) < drainingWithin {
			return true
		}
	}
	return false
}

// roomMade wakes the fan-outs waiting in admit. e.mu is held.
func (e *engine) roomMade() {
	close(e.room)
	e.room = make(chan struct{})
}
