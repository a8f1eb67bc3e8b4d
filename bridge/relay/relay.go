package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/internal/failpoint"
)

// API is what the relay needs of the transcription API: the record for full payloads (the
// outbox carries ids only).
type API interface {
	Get(ctx context.Context, id string) (*api.Transcription, error)
}

// Relay hands outbox events to endpoints: it fans each event out to a delivery per subscribed
// endpoint, then sends due deliveries, records every attempt and schedules retries in the store.
// Transactions stay short: no HTTP call runs inside one.
type Relay struct {
	Store     Store
	Endpoints []*Endpoint
	// Bus is where events arrive (bridge.EventsTopic), read with the consumer group "relay".
	Bus Subscriber
	// Poison receives messages that cannot be handled (bridge.EventsPoisonTopic).
	Poison message.Publisher
	// API fetches transcription records for full payloads; nil sends thin ones.
	API API
	// GoneUpstream ends the job of transcription id deleted when a full payload's fetch answers
	// 404 (bridge.Pipeline.GoneUpstream: conditional in the store, so one transcription.deleted
	// across replicas); while says what was reading. nil: the job is left to the tracker.
	GoneUpstream func(ctx context.Context, id, while string) (bool, error)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Rand is the retry jitter's source, uniform in [0, 1) (default math/rand/v2's Float64);
	// tests inject a seeded one.
	Rand func() float64
	// Log receives one line per attempt (default: discarded).
	Log *slog.Logger
	// Lease is how long a claimed delivery is reserved (default 2 min, above any timeout).
	Lease time.Duration
	// PerEndpoint bounds simultaneous requests to one endpoint (default 4).
	PerEndpoint int
	// Committers is how many transactions Run's group commit may write at once (default 1):
	// above 1, a batch's records may go to a transaction of their own, beside the rest of the
	// batch (commit.go; CommittersPostgres for a store that writes transactions side by side).
	Committers int
	// Metrics hears every attempt's outcome, delivery latency and retries (nil: nothing).
	Metrics Metrics
	// SweepAfter is how old an outbox event the bus has not brought may get before Run fans it
	// out from the outbox (default 1 min: a message lost, or poisoned by a panic). Only with a
	// Store that has PendingEvents.
	SweepAfter time.Duration
	// Replica names this process among replicas in its lease (relay:<replica>), by which the
	// replicas count each other to share the endpoints' rate limits (default
	// bridge.DefaultReplica()).
	Replica string

	once    sync.Once
	spells  spells // the endpoints' failing spells (alerts.go)
	records *records
	thin    *memo[encoded] // thin payloads' bodies by event
	byName  map[string]*Endpoint
	clients map[string]*http.Client
	// consumer is what Consuming reads: the running router and the last message handled.
	consumer consumer
	// eng is Run's engine while it runs: the router's fan-outs go through its group commit.
	eng atomic.Pointer[engine]
}

func (r *Relay) init() {
	r.once.Do(func() {
		if r.Lease == 0 {
			r.Lease = 2 * time.Minute
		}
		if r.PerEndpoint == 0 {
			r.PerEndpoint = 4
		}
		if r.SweepAfter == 0 {
			r.SweepAfter = time.Minute
		}
		if r.Replica == "" {
			r.Replica = bridge.DefaultReplica()
		}
		if r.Log == nil {
			r.Log = slog.New(slog.DiscardHandler)
		}
		r.records = newRecords(5*time.Minute, 1000)
		r.thin = newMemo[encoded](5*time.Minute, 4096)
		r.byName, r.clients = map[string]*Endpoint{}, map[string]*http.Client{}
		for _, e := range r.Endpoints {
			r.byName[e.Name] = e
			r.clients[e.Name] = NewHTTPClient(e.AllowPrivate, e.Timeout)
		}
	})
}

func (r *Relay) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

// Deliver sends the deliveries that are due, every endpoint at once, and returns how many it
// attempted: one transaction claims them all, PerEndpoint workers per endpoint send them, one
// transaction records every attempt. For run --once and tests; Run keeps lanes full instead.
func (r *Relay) Deliver(ctx context.Context) (int, error) {
	r.init()
	b := bridge.DeliveryBatch{Now: r.now()}
	for _, ep := range r.Endpoints {
		// A few rounds' worth at once; never more rounds than the lease covers at the
		// endpoint's timeout, so no lease runs out mid-batch.
		rounds := 8
		if ep.Timeout > 0 {
			rounds = max(1, min(rounds, int(r.Lease/(2*ep.Timeout))))
		}
		b.Claims = append(b.Claims, bridge.ClaimItem{Endpoint: ep.Name, Limit: rounds * r.PerEndpoint, Lease: r.Lease})
	}
	if err := r.Store.Commit(ctx, &b); err != nil {
		return 0, err
	}
	var mu sync.Mutex
	var done []bridge.RecordItem
	var wg sync.WaitGroup
	total := 0
	for _, c := range b.Claims {
		total += len(c.Claimed)
		due := make(chan bridge.Delivery, len(c.Claimed))
		for _, d := range c.Claimed {
			due <- d
		}
		close(due)
		for range min(r.PerEndpoint, len(c.Claimed)) {
			wg.Go(func() {
				for d := range due {
					if it, ok := r.attempt(ctx, &d); ok {
						mu.Lock()
						done = append(done, it)
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	if len(done) == 0 {
		return total, ctx.Err()
	}
	rb := bridge.DeliveryBatch{Now: r.now(), Records: done}
	if err := r.Store.Commit(context.WithoutCancel(ctx), &rb); err != nil {
		return total, err
	}
	return total, r.recorded(rb.Records)
}

// recorded logs the attempts of items whose delivery a newer claim took over (ErrConflict:
// this relay was paused past its lease; the attempt is kept in the history, the other claim
// decides the state) and returns the first other failure (an unknown delivery), or nil.
func (r *Relay) recorded(items []bridge.RecordItem) error {
	var first error
	for _, it := range items {
		switch {
		case errors.Is(it.Err, bridge.ErrConflict):
			r.Log.Warn("delivery claimed again by another relay while this attempt ran", deliveryAttrs(it.Delivery, "error", it.Err)...)
		case it.Err != nil && first == nil:
			first = it.Err
		}
	}
	return first
}

// attempt makes one try of d and returns it with d's new state, for the store to record; ok
// is false when ctx ended first (nothing to record: the lease runs out and the delivery is
// tried again).
func (r *Relay) attempt(ctx context.Context, d *bridge.Delivery) (it bridge.RecordItem, ok bool) {
	ep := r.byName[d.Endpoint]
	if ep != nil && !ep.quota.wait(ctx, quotaWithin(ep, d, r.now())) {
		return bridge.RecordItem{}, false // its turn would come after its lease: claimed again later
	}
	now := r.now()
	d.Attempts++
	a := bridge.Attempt{At: now}
	if ep == nil { // claimed for an endpoint no longer configured
		d.Status, a.Error = bridge.DeliveryDead, "the endpoint is no longer configured"
		r.logAttempt(ctx, d, Result{}, a)
		r.observe(d, OutcomeDead, now)
		return bridge.RecordItem{Delivery: d, Attempt: a}, true
	}
	sendCtx := ctx
	if !d.LeaseUntil.IsZero() {
		// The attempt ends a second before the claim does (a full payload's GET may have
		// waited on the rate limit): past it, another claimer may send the same delivery.
		// Without a GET, the POST's own timeout goes in the same deadline (one context
		// timer, not two).
		timeout := d.LeaseUntil.Sub(now) - time.Second
		if !r.fetches(ep, d) {
			timeout = min(timeout, ep.Timeout)
		}
		var cancel context.CancelFunc
		sendCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	sendCtx, span := startAttempt(sendCtx, d)
	data, err := r.payload(sendCtx, ep, d)
	fetched := err == nil
	var res Result
	if err == nil {
		res, err = Send(sendCtx, r.clients[ep.Name], ep, Message{ID: d.WebhookID, Type: d.Type, Time: d.EventAt, Data: data}, now)
	}
	endAttempt(span, res, err)
	if ctx.Err() != nil && res.Status == 0 && !res.Skipped {
		return bridge.RecordItem{}, false // stopped before an answer: nothing to record
	}
	failpoint.Hit("relay-sent") // sent, not yet recorded: the receiver may see it again
	if err == nil && res.OK() {
		failpoint.Hit("relay-accepted") // accepted, not yet recorded: the receiver will see it again
	}
	a.Status, a.Latency, a.Response = res.Status, float64(res.Latency.Microseconds())/1000, res.Body
	if err != nil {
		a.Error = err.Error()
	}
	outcome := r.settle(ctx, ep, d, res, err, fetched, now)
	if outcome == OutcomeFiltered {
		a.Error = FilteredNote
	}
	r.logAttempt(ctx, d, res, a)
	r.observe(d, outcome, r.now())
	if outcome != OutcomeFiltered && fetched {
		// A try whose payload could not be fetched says nothing of the endpoint.
		r.spells.note(ep.Name, outcome == OutcomeDelivered, attemptError(a), now)
	}
	return bridge.RecordItem{Delivery: d, Attempt: a}, true
}

// settle sets d's new state from one attempt's answer (res, err; fetched false when the
// transcription of a full payload could not be fetched, so nothing was sent) and returns its
// outcome.
func (r *Relay) settle(ctx context.Context, ep *Endpoint, d *bridge.Delivery, res Result, err error, fetched bool, now time.Time) string {
	switch {
	case err == nil && res.Skipped:
		d.Status = bridge.DeliveryDelivered
		return OutcomeFiltered
	case err == nil && res.OK():
		d.Status = bridge.DeliveryDelivered
		return OutcomeDelivered
	case err == nil && res.Status == http.StatusGone:
		d.Status = bridge.DeliveryDead
		reason := "answered 410 Gone"
		// The store decides the transition: of several deliveries answered 410 at once (here or
		// on another replica), the first disables the endpoint and emits the one event, to
		// the other endpoints (Endpoint); the others change nothing.
		ev := bridge.Event{Type: EventEndpointDisabled, Endpoint: ep.Name, Data: mustJSON(map[string]any{"endpoint": ep.Name, "reason": reason})}
		if err := r.Store.DisableEndpoint(ctx, ep.Name, reason, now, ev); err != nil {
			// The attempt is recorded all the same; the next 410 disables it again.
			r.Log.Error("endpoint answered 410 Gone and could not be disabled", "endpoint", ep.Name, "error", err)
		} else {
			r.Log.Warn("endpoint disabled (or already so)", "endpoint", ep.Name, "reason", reason)
		}
		return OutcomeGone
	case errors.Is(err, ErrDeletedUpstream) && r.endDeleted(ctx, d):
		d.Status = bridge.DeliveryDelivered // settled, never sent: the record is gone (gone.go)
		return OutcomeDeletedUpstream
	case !fetched:
		// The API did not give the transcription in time (down, rate-limited, slow): the
		// endpoint was never contacted, so the try does not count towards its retry schedule
		// (an API outage must not dead-letter deliveries; issue 32, point 4). It is tried again
		// after the schedule's wait for the tries made so far; the history keeps the failure.
		d.Attempts--
		d.Status, d.NextAttemptAt = bridge.DeliveryPending, now.Add(fetchRetry(ep.RetrySchedule, d.Attempts, r.Rand))
		return OutcomeFailed
	}
	delay, ok := nextDelay(ep.RetrySchedule, d.Attempts, res.RetryAfter, r.Rand)
	if !ok {
		d.Status = bridge.DeliveryDead // a dead letter: bridge deliveries replay brings it back
		return OutcomeDead
	}
	d.Status, d.NextAttemptAt = bridge.DeliveryPending, now.Add(delay)
	return OutcomeFailed
}

// quotaWithin is how long an attempt of d may wait for ep's rate limit: until a second and the
// endpoint's timeout before d's lease ends (at least a millisecond); 0 (no bound) for a
// delivery not leased.
func quotaWithin(ep *Endpoint, d *bridge.Delivery, now time.Time) time.Duration {
	if d.LeaseUntil.IsZero() {
		return 0
	}
	return max(time.Millisecond, d.LeaseUntil.Sub(now)-ep.Timeout-time.Second)
}

// logAttempt logs one attempt of d: at INFO when delivered, WARN when it failed and will be
// retried (with the time of the retry), ERROR when the delivery is given up (a dead letter).
func (r *Relay) logAttempt(ctx context.Context, d *bridge.Delivery, res Result, a bridge.Attempt) {
	level := slog.LevelInfo
	switch d.Status {
	case bridge.DeliveryPending:
		level = slog.LevelWarn
	case bridge.DeliveryDead:
		level = slog.LevelError
	}
	if !r.Log.Enabled(ctx, level) {
		return // no line: none of its attributes built
	}
	attrs := deliveryAttrs(d, "type", d.Type, "attempt", d.Attempts, "status", res.Status, "outcome", d.Status)
	if d.Status == bridge.DeliveryPending {
		attrs = append(attrs, "retry_at", d.NextAttemptAt)
	}
	if a.Error != "" {
		attrs = append(attrs, "error", a.Error)
	}
	r.Log.Log(ctx, level, "delivery", attrs...)
}

// FilteredNote is the error text of an attempt the endpoint's filter dropped: no request was
// made, and the delivery counts as delivered.
const FilteredNote = "dropped by the endpoint's filter"

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// Run reads the bus and delivers until ctx ends: the router fans events out through the
// engine's group commit, and each endpoint's lane sends, so a slow or timing-out endpoint
// delays only its own deliveries. interval is how often it looks for retries come due. It
// fails when the router cannot start.
func (r *Relay) Run(ctx context.Context, interval time.Duration) error {
	r.init()
	router, err := r.router()
	if err != nil {
		return err
	}
	r.abandon(ctx)
	eng := newEngine(r, interval)
	r.eng.Store(eng)
	defer r.eng.Store(nil)
	engCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engDone := make(chan struct{})
	go func() { defer close(engDone); eng.run(engCtx) }()
	keepCtx, stopKeep := context.WithCancel(ctx)
	keepDone := make(chan struct{})
	go func() { defer close(keepDone); r.keep(keepCtx) }()
	r.consumer.start(router, r.now())
	err = router.Run(ctx)
	stopKeep()
	stopEngine() // after the router: its last fan-outs are committed first
	<-engDone
	<-keepDone
	return err
}

// abandon gives up the pending deliveries of endpoints removed from the configuration.
func (r *Relay) abandon(ctx context.Context) {
	known := make([]string, len(r.Endpoints))
	for i, e := range r.Endpoints {
		known[i] = e.Name
	}
	if n, err := r.Store.Abandon(ctx, known, r.now()); err != nil {
		r.Log.Error("abandon deliveries of removed endpoints", "error", err)
	} else if n > 0 {
		r.Log.Warn("deliveries of endpoints no longer configured are dead letters", "count", n)
	}
}

// Flush fans out every event on the bus, then delivers until nothing is due (retries
// scheduled later stay pending): for run --once and tests.
func (r *Relay) Flush(ctx context.Context) error {
	r.init()
	r.abandon(ctx)
	for {
		// Deliveries may emit events (endpoint.disabled): read the bus again after each round.
		if err := r.drainBus(ctx); err != nil {
			return err
		}
		n, err := r.Deliver(ctx)
		if err != nil {
			return err
		}
		alerted, err := r.Alert(ctx) // endpoint.failing, when due: the next round sends it
		if err != nil || (n == 0 && !alerted) {
			return err
		}
	}
}
