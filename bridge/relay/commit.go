package relay

import (
	"context"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Group commits. One committer (the engine's run loop) gathers and writes batches one after
// the other. With Relay.Committers above 1, a batch's records (attempts and the deliveries'
// new states: most of a commit's row work on PostgreSQL) may go to a transaction of their own,
// written in the background while the committer writes the rest of the batch (fan-outs,
// claims, releases) and gathers the next; up to Committers-1 such transactions at once. Nothing
// else changes hands: fan-outs and claims stay with the one committer, so the lanes' room is
// counted as before. A record written apart frees its job's next delivery only once it is
// committed, so a claim of the same batch may not see it: a lane with deliveries left for a
// search (unleased) is marked for one when the records' transaction ends. Two transactions at
// once are what two replicas' committers already are to the store: records are fenced by
// their leases, claims skip what another transaction holds.

// commit writes one batch of what has gathered; it reports whether it wrote anything or handed
// records to a transaction of their own (the caller commits again at once: more may have
// gathered meanwhile). The batch's records and fan-outs make their lanes' claims of the same
// batch worth making: the transaction records first, fans out next and claims last (unless
// its records go apart: recordApart).
func (e *engine) commit(ctx context.Context) bool {
	b := bridge.DeliveryBatch{Now: e.r.now()}
	e.mu.Lock()
	records := e.records
	e.records = nil
	apart := e.recordApart(len(records))
	if !apart {
		b.Records = records
	}
	b.Releases, e.releases = e.releases, nil
	fanOuts := e.fanOuts
	e.fanOuts = nil
	for _, it := range records {
		if l := e.lanes[it.Delivery.Endpoint]; l != nil {
			l.held--                                        // recorded by this batch (given back if it fails)
			l.dirty = l.dirty || (l.unleased > 0 && !apart) // it may free a job's next delivery
		}
	}
	fanned := map[string]int{} // new deliveries per lane
	for _, f := range fanOuts {
		b.FanOuts = append(b.FanOuts, f.item)
		for _, name := range f.item.Endpoints {
			fanned[name]++
		}
	}
	for name, l := range e.lanes {
		l.fanning, l.committing = 0, fanned[name]
		l.waiting = 0
		room := l.capacity - l.held
		switch {
		case e.stopped || room <= 0:
			l.dirty = l.dirty || fanned[name] > 0 // its new deliveries wait for a search
		case l.dirty && (2*room >= l.capacity || l.held == 0):
			// A search once half the lane is free (or the lane is idle): fewer, larger claims,
			// older work first, the new deliveries in the room left.
			b.Claims = append(b.Claims, bridge.ClaimItem{Endpoint: name, Limit: room, Lease: e.r.Lease})
			l.dirty = false
		case fanned[name] > 0 && !l.dirty:
			// Nothing known to wait (a backlog makes the lane dirty): the batch's new
			// deliveries, taken as they are written, no search.
			b.Claims = append(b.Claims, bridge.ClaimItem{Endpoint: name, Limit: room, Lease: e.r.Lease, FanOutsOnly: true})
		case fanned[name] > 0:
			// A backlog and less than half the lane free: its new deliveries wait for the
			// search, after the older work.
		}
	}
	e.roomMade() // the records' room
	e.mu.Unlock()
	if apart {
		e.inflight.Add(1)
		go e.writeRecords(ctx, bridge.DeliveryBatch{Now: b.Now, Records: records})
	}
	if len(b.Records)+len(b.FanOuts)+len(b.Claims)+len(b.Releases) == 0 {
		return apart
	}
	err := e.r.Store.Commit(ctx, &b)
	e.mu.Lock()
	if err != nil {
		e.putBack(&b, fanOuts, err)
		e.settled()
		failures := e.failures
		e.failures++
		e.mu.Unlock()
		if ctx.Err() == nil {
			e.r.Log.Error("relay: commit", "error", err)
		}
		pause(ctx, commitBackoff(failures)) // a store down or busy: no spinning
		return false
	}
	e.failures = 0
	e.apply(&b, fanOuts, fanned)
	e.settled()
	e.mu.Unlock()
	return true
}

// recordApart says whether n gathered records go to a transaction of their own, taking a
// slot for it if one is free. e.mu is held.
func (e *engine) recordApart(n int) bool {
	if n == 0 || e.slots == nil || e.stopped {
		return false
	}
	select {
	case e.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// writeRecords commits a batch of records alone, then frees its slot and wakes the
// committer; a lane that left deliveries for a search gets one (a record may have freed its
// job's next delivery). When the commit fails, the records go back for the next batch, and
// the slot stays taken for the backoff: a store down or busy is not spun on.
func (e *engine) writeRecords(ctx context.Context, b bridge.DeliveryBatch) {
	defer e.inflight.Done()
	err := e.r.Store.Commit(ctx, &b)
	e.mu.Lock()
	if err != nil {
		e.putBack(&b, nil, err)
		failures := e.failures
		e.failures++
		e.mu.Unlock()
		if ctx.Err() == nil {
			e.r.Log.Error("relay: commit records", "error", err)
			pause(ctx, commitBackoff(failures))
		}
	} else {
		e.failures = 0
		if err := e.r.recorded(b.Records); err != nil {
			e.r.Log.Error("relay: record", "error", err)
		}
		for _, it := range b.Records {
			if l := e.lanes[it.Delivery.Endpoint]; l != nil && l.unleased > 0 {
				l.dirty = true
			}
		}
		e.mu.Unlock()
	}
	<-e.slots
	e.signal()
}

// pause waits for d, or less when ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// putBack keeps a failed batch's records and releases for the next one, asks its claims again
// and answers its fan-outs with err (the bus hands those messages out again). e.mu is held.
func (e *engine) putBack(b *bridge.DeliveryBatch, fanOuts []fanOutReq, err error) {
	e.records = append(b.Records, e.records...)
	e.releases = append(b.Releases, e.releases...)
	for _, it := range b.Records {
		if l := e.lanes[it.Delivery.Endpoint]; l != nil {
			l.held++
		}
	}
	for _, c := range b.Claims {
		e.lanes[c.Endpoint].dirty = true
	}
	for _, f := range fanOuts {
		f.done <- err
	}
}

// apply hands a committed batch's outcomes out: records' failures logged, fan-outs answered,
// claimed deliveries queued in their lanes; a lane whose new deliveries (fanned, per lane) were
// not all leased has work for a search, counted in its unleased (fanned is used up: it ends
// holding the unleased ones). e.mu is held.
func (e *engine) apply(b *bridge.DeliveryBatch, fanOuts []fanOutReq, fanned map[string]int) {
	if err := e.r.recorded(b.Records); err != nil {
		e.r.Log.Error("relay: record", "error", err)
	}
	for i, f := range fanOuts {
		f.done <- b.FanOuts[i].Err
	}
	events := make(map[int64]bool, len(b.FanOuts))
	for _, f := range b.FanOuts {
		events[f.Ref.EventID] = true
	}
	for _, c := range b.Claims {
		l := e.lanes[c.Endpoint]
		fresh := 0
		for _, d := range c.Claimed {
			if events[d.EventID] {
				fresh++
			}
		}
		for _, chain := range chains(c.Claimed) {
			select {
			case l.queue <- chain: // room was counted: never blocks
				l.held += len(chain)
				l.queued.Add(int64(len(chain)))
			default:
				// Records written apart that failed came back into held after this batch
				// counted its room: the chain goes back, not to block the committer.
				e.gather(l)
				e.releases = append(e.releases, chain...)
				l.unleased += len(chain)
				l.dirty = true
			}
		}
		if (len(c.Claimed) == c.Limit && !c.FanOutsOnly) || fresh < fanned[c.Endpoint] {
			l.dirty = true // more may be due, or new deliveries wait for a search
		}
		l.unleased = max(0, l.unleased-(len(c.Claimed)-fresh)) // the search's finds
		fanned[c.Endpoint] -= fresh
	}
	for name, n := range fanned {
		if l := e.lanes[name]; l != nil {
			l.unleased += n // written without a lease: a search's to find
		}
	}
}

// settled ends a commit's count of its fan-outs (committing): they are held now, or were not
// written. e.mu is held.
func (e *engine) settled() {
	for _, l := range e.lanes {
		l.committing = 0
	}
	e.roomMade()
}
