package relay

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// engine is Run's delivery machinery. Each endpoint has a lane: a queue of claimed
// deliveries and PerEndpoint long-lived workers that send them, so a slow endpoint holds only
// its own workers. One committer goroutine group-commits what the lanes and the bus produce:
// the attempts recorded, the events fanned out and the claims that refill the queues go to
// the store in one transaction (bridge.DeliveryBatch), as many as gathered while the previous
// transaction ran (with Relay.Committers above 1, the records may go to one of their own beside
// it: commit.go); a fan-out is gathered once its lanes have room (admit.go). No HTTP call
// runs inside a transaction, and no goroutine is started per delivery.
type engine struct {
	r        *Relay
	interval time.Duration
	wake     chan struct{}

	mu       sync.Mutex
	stopped  bool // no more claims: the workers are gone
	records  []bridge.RecordItem
	releases []bridge.Delivery // claimed and given back unattempted (stale, the rest of a chain, a stop)
	fanOuts  []fanOutReq
	lanes    map[string]*lane
	since    time.Time // when the batch being gathered began (pace.go)
	// room is closed, and replaced, whenever lanes may have room again; heldBack counts the
	// fan-outs waiting for it, and poll wakes them while there are some (admit.go).
	room     chan struct{}
	heldBack int
	poll     *time.Timer
	failures int // commits failed in a row, of either kind (commitBackoff); a success resets it
	// slots holds a token per transaction of records written apart (commit.go), when the
	// relay has several committers; nil with one.
	slots    chan struct{}
	inflight sync.WaitGroup
}

// lane is one endpoint's queue and its claim accounting. The queue holds chains: one
// delivery, or several of one job in event order, leased together as their events were
// fanned out (bridge.ClaimItem), sent one after another by one worker.
type lane struct {
	ep    *Endpoint
	queue chan []bridge.Delivery
	// held counts deliveries claimed and not yet recorded or given back (queued, in flight or
	// awaiting the committer); capacity bounds it.
	held, capacity int
	// dirty means a search may find something (new deliveries not leased as they were
	// written, a record freeing a job's next delivery, a delivery given back, a claim that
	// filled its limit) before the next timed look; a dirty lane gets no fan-outs-only claim.
	dirty bool
	// unleased counts the deliveries this relay left in the store for a search (fanned out
	// without a lease, given back) that no search has taken since. Only those can wait for a
	// job's earlier delivery, so a record makes the lane dirty only while it is above zero:
	// otherwise a search would find nothing, and the lane's next fan-outs would wait for it.
	// What other replicas leave, and retries come due, the timed look finds.
	unleased int
	// fanning counts the deliveries of the gathered fan-outs, committing those of the batch
	// being committed; recorded is when a worker last recorded an attempt (admit.go).
	fanning, committing int
	recorded            time.Time
	// waiting counts the gathered items of the lane: its records and releases, fan-outs to it.
	waiting int
	// queued counts the deliveries in queue (its chains' lengths).
	queued atomic.Int64
}

// fanOutReq is one bus message waiting for its fan-out to commit.
type fanOutReq struct {
	item bridge.FanOutItem
	done chan error
}

// LaneRounds is how many rounds of PerEndpoint deliveries a lane claims ahead: a lane holds at
// most LaneRounds × PerEndpoint deliveries claimed and not yet recorded (what a crash may send
// again). At the default PerEndpoint (4) a lane holds 256, more than twice what the bus hands
// out at once (BusInFlight events, a delivery each per lane), so a lane still holds work while
// the next events' fan-outs commit.
const LaneRounds = 64

func newEngine(r *Relay, interval time.Duration) *engine {
	e := &engine{r: r, interval: interval, wake: make(chan struct{}, 1), lanes: map[string]*lane{}, room: make(chan struct{})}
	for _, ep := range r.Endpoints {
		// Claim LaneRounds ahead: large claims and large group commits. A delivery whose
		// lease would run out before its answer (a slow endpoint backs its queue up) is not
		// sent: it goes back to the store when its lease ends (work).
		c := LaneRounds * r.PerEndpoint
		e.lanes[ep.Name] = &lane{ep: ep, queue: make(chan []bridge.Delivery, c), capacity: c, dirty: true}
	}
	if r.Committers > 1 {
		e.slots = make(chan struct{}, r.Committers-1)
	}
	return e
}

func (e *engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// fanOut hands ref to the committer and waits until its deliveries are committed. It fails
// with ErrUnknownEvent for an event the outbox lacks, or the batch's error.
func (e *engine) fanOut(ctx context.Context, ref bridge.EventRef, endpoints []string) error {
	req := fanOutReq{item: bridge.FanOutItem{Ref: ref, Endpoints: endpoints}, done: make(chan error, 1)}
	if err := e.admit(ctx, req); err != nil {
		return err
	}
	e.signal()
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveBack hands claimed deliveries that will not be attempted now (stale in the queue, the
// relay stopping, the rest of a chain whose delivery failed) or that got no answer to the next
// commit, which ends their leases, so a claim can take them again at once.
func (e *engine) giveBack(l *lane, ds ...bridge.Delivery) {
	if len(ds) == 0 {
		return
	}
	e.mu.Lock()
	e.gather(l)
	e.releases = append(e.releases, ds...)
	l.held -= len(ds)
	l.unleased += len(ds)
	l.dirty = true
	e.mu.Unlock()
	e.signal()
}

// record hands an attempt's outcome to the committer.
func (e *engine) record(it bridge.RecordItem) {
	e.mu.Lock()
	l := e.lanes[it.Delivery.Endpoint]
	e.gather(l)
	if l != nil {
		l.recorded = time.Now() // real time, as gather's
	}
	e.records = append(e.records, it)
	e.mu.Unlock()
	e.signal()
}

// run starts the lanes' workers and commits until ctx ends; then it records the attempts
// already made (so a stop does not resend what was delivered) and returns.
func (e *engine) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, l := range e.lanes {
		for range e.r.PerEndpoint {
			wg.Go(func() { e.work(ctx, l) })
		}
	}
	tick := time.NewTicker(e.interval)
	defer tick.Stop()
	sweep := time.NewTicker(max(e.r.SweepAfter/2, time.Millisecond))
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			e.inflight.Wait()
			e.final()
			return
		case <-sweep.C:
			if _, err := e.sweep(ctx); err != nil && ctx.Err() == nil {
				e.r.Log.Error("relay: sweep", "error", err)
			}
		case <-e.wake:
		case <-tick.C:
			e.mu.Lock()
			for _, l := range e.lanes {
				l.dirty = true // retries come due with time
			}
			e.mu.Unlock()
		}
		// Group commit: while a transaction runs, the next batch gathers; while the lanes are
		// busy, it may wait a little longer to grow (hold).
		for ctx.Err() == nil {
			if d := e.hold(); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-e.wake:
					t.Stop()
					continue
				case <-ctx.Done():
					t.Stop()
					continue
				}
			}
			if !e.commit(ctx) {
				break
			}
		}
	}
}

// work sends the chains of one lane, one delivery at a time, until ctx ends.
func (e *engine) work(ctx context.Context, l *lane) {
	for {
		select {
		case <-ctx.Done():
			return
		case chain := <-l.queue:
			l.queued.Add(-int64(len(chain)))
			if ctx.Err() != nil { // both were ready: the stop wins, the chain goes back
				e.giveBack(l, chain...)
				return
			}
			e.send(ctx, l, chain)
		}
	}
}

// send attempts a chain's deliveries in order, each once the one before it was delivered;
// what is left when one is not goes back (its job's order: a claim takes them when due).
func (e *engine) send(ctx context.Context, l *lane, chain []bridge.Delivery) {
	for i := range chain {
		d := chain[i]
		if d.LeaseUntil.Sub(e.r.now()) < min(l.ep.Timeout+time.Second, e.r.Lease/2) || ctx.Err() != nil {
			// Waited too long in the queue: its lease may end mid-attempt, and another claim
			// could send it at the same time. Given back for a fresh claim. (A lease shorter
			// than the timeout is the configuration's choice: half of it is then enough.)
			e.giveBack(l, chain[i:]...)
			return
		}
		it, ok := e.r.attempt(ctx, &d)
		if !ok {
			// Stopped before an answer: given back, so it is tried again at once after a
			// restart (the receiver may have seen it: at least once).
			e.giveBack(l, chain[i:]...)
			return
		}
		e.record(it)
		if d.Status != bridge.DeliveryDelivered {
			e.giveBack(l, chain[i+1:]...)
			return
		}
	}
}

// final records, with a short grace (trying again while a commit fails), the attempts made
// before the stop, and gives back the deliveries still queued (their leases end at once, so a
// restart or another replica sends them without waiting for the leases to run out).
func (e *engine) final() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.slots = nil // nothing in flight any more: the last records go with the rest
	e.mu.Lock()
	e.stopped = true
	for _, l := range e.lanes {
		for len(l.queue) > 0 { // the workers are gone: what is queued goes back
			chain := <-l.queue
			l.queued.Add(-int64(len(chain)))
			e.releases = append(e.releases, chain...)
			l.held -= len(chain)
		}
	}
	e.mu.Unlock()
	for ctx.Err() == nil {
		if !e.commit(ctx) {
			e.mu.Lock()
			left := len(e.records) + len(e.fanOuts) + len(e.releases)
			e.mu.Unlock()
			if left == 0 {
				return
			}
			// The commit failed (and paused): try again within the grace.
		}
	}
}
