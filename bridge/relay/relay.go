package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
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
	// Metrics hears every attempt's outcome, delivery latency and retries (nil: nothing).
	Metrics Metrics

	once    sync.Once
	records *records
	byName  map[string]*Endpoint
	clients map[string]*http.Client
	// consumer is what Consuming reads: the running router and the last message handled.
	consumer consumer
}

func (r *Relay) init() {
	r.once.Do(func() {
		if r.Lease == 0 {
			r.Lease = 2 * time.Minute
		}
		if r.PerEndpoint == 0 {
			r.PerEndpoint = 4
		}
		if r.Log == nil {
			r.Log = slog.New(slog.DiscardHandler)
		}
		r.records = newRecords(5*time.Minute, 1000)
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
// attempted.
func (r *Relay) Deliver(ctx context.Context) (int, error) {
	r.init()
	var mu sync.Mutex
	var total int
	var first error
	var wg sync.WaitGroup
	for _, ep := range r.Endpoints {
		wg.Go(func() {
			n, err := r.deliverEndpoint(ctx, ep.Name)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if first == nil {
				first = err
			}
		})
	}
	wg.Wait()
	return total, first
}

// deliverEndpoint claims up to PerEndpoint due deliveries of one endpoint and sends them in
// parallel.
func (r *Relay) deliverEndpoint(ctx context.Context, name string) (int, error) {
	// Claim a few rounds' worth at once (fewer transactions), send PerEndpoint at a time; never
	// more rounds than the lease covers at the endpoint's timeout, so no lease runs out mid-batch.
	rounds := 8
	if ep := r.byName[name]; ep != nil {
		rounds = max(1, min(rounds, int(r.Lease/(2*ep.Timeout))))
	}
	due, err := r.Store.Claim(ctx, name, r.now(), r.Lease, rounds*r.PerEndpoint)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(due))
	sem := make(chan struct{}, r.PerEndpoint)
	for _, d := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := r.attempt(ctx, &d)
			switch {
			case errors.Is(err, bridge.ErrConflict):
				// This relay was paused past its lease and another claimed the delivery: the
				// attempt is kept in its history, the other claim decides its state.
				r.Log.Warn("delivery claimed again by another relay while this attempt ran", deliveryAttrs(&d, "err", err)...)
			case err != nil:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return len(due), <-errs
}

// attempt makes one try of d and records it.
func (r *Relay) attempt(ctx context.Context, d *bridge.Delivery) error {
	now := r.now()
	ep := r.byName[d.Endpoint]
	d.Attempts++
	a := bridge.Attempt{At: now}
	if ep == nil { // claimed for an endpoint no longer configured
		d.Status, a.Error = bridge.DeliveryDead, "the endpoint is no longer configured"
		r.logAttempt(ctx, d, Result{}, a)
		r.observe(d, OutcomeDead, now)
		return r.Store.Record(ctx, d, a)
	}
	data, err := r.payload(ctx, ep, d)
	var res Result
	if err == nil {
		res, err = Send(ctx, r.clients[ep.Name], ep, Message{ID: d.WebhookID, Type: d.Type, Time: d.EventAt, Data: data}, now)
	}
	if ctx.Err() != nil {
		return nil // stopping: the lease runs out and the delivery is tried again
	}
	failpoint.Hit("relay-sent") // sent, not yet recorded: the receiver may see it again
	if err == nil && res.OK() {
		failpoint.Hit("relay-accepted") // accepted, not yet recorded: the receiver will see it again
	}
	a.Status, a.Latency, a.Response = res.Status, float64(res.Latency.Microseconds())/1000, res.Body
	if err != nil {
		a.Error = err.Error()
	}
	outcome := OutcomeFailed
	switch {
	case err == nil && res.Skipped:
		d.Status, a.Error, outcome = bridge.DeliveryDelivered, "dropped by the endpoint's filter", OutcomeFiltered
	case err == nil && res.OK():
		d.Status, outcome = bridge.DeliveryDelivered, OutcomeDelivered
	case err == nil && res.Status == http.StatusGone:
		d.Status, outcome = bridge.DeliveryDead, OutcomeGone
		reason := "answered 410 Gone"
		ev := bridge.Event{Type: EventEndpointDisabled, Data: mustJSON(map[string]any{"endpoint": ep.Name, "reason": reason})}
		if err := r.Store.DisableEndpoint(ctx, ep.Name, reason, now, ev); err != nil {
			return err
		}
		r.Log.Warn("endpoint disabled", "endpoint", ep.Name, "reason", reason)
	default:
		delay, ok := nextDelay(ep.RetrySchedule, d.Attempts, res.RetryAfter, r.Rand)
		if !ok {
			d.Status, outcome = bridge.DeliveryDead, OutcomeDead // a dead letter: bridge deliveries replay brings it back
		} else {
			d.Status, d.NextAttemptAt = bridge.DeliveryPending, now.Add(delay)
		}
	}
	r.logAttempt(ctx, d, res, a)
	r.observe(d, outcome, r.now())
	return r.Store.Record(ctx, d, a)
}

// logAttempt logs one attempt of d: at INFO when delivered, WARN when it failed and will be
// retried (with the time of the retry), ERROR when the delivery is given up (a dead letter).
func (r *Relay) logAttempt(ctx context.Context, d *bridge.Delivery, res Result, a bridge.Attempt) {
	level := slog.LevelInfo
	attrs := deliveryAttrs(d, "type", d.Type, "attempt", d.Attempts, "status", res.Status, "outcome", d.Status)
	switch d.Status {
	case bridge.DeliveryPending:
		level = slog.LevelWarn
		attrs = append(attrs, "retry_at", d.NextAttemptAt)
	case bridge.DeliveryDead:
		level = slog.LevelError
	}
	if a.Error != "" {
		attrs = append(attrs, "error", a.Error)
	}
	r.Log.Log(ctx, level, "delivery", attrs...)
}

// payload builds the message data: the event's details, the job id and, for full payloads, the
// transcription record as the API returns it (fetched now: the outbox holds ids only).
func (r *Relay) payload(ctx context.Context, ep *Endpoint, d *bridge.Delivery) (map[string]any, error) {
	data := map[string]any{}
	if len(d.Data) > 0 {
		if err := json.Unmarshal(d.Data, &data); err != nil {
			return nil, err
		}
	}
	hideLocalPaths(data)
	data["job_id"] = d.JobID
	if d.TranscriptionID == "" {
		return data, nil
	}
	data["transcription_id"] = d.TranscriptionID
	if ep.Payload != PayloadFull || r.API == nil {
		return data, nil
	}
	t, err := r.records.get(ctx, r.API, d.EventID, d.TranscriptionID, r.now())
	if err != nil {
		return nil, err
	}
	data["transcription"] = t // nil: deleted upstream since
	return data, nil
}

// localPathRe finds what names a place on the bridge's own disk in a text: a file:// URL, an
// absolute path (two elements or more, after a space, quote, bracket or '=' or at the start) or a
// Windows drive path. Its first group is what precedes the path.
var localPathRe = regexp.MustCompile(`(^|[\s"'(\[=])(file://[^\s"')\]]+|(?:/[^/\s"':)\]]+){2,}|[A-Za-z]:\\[^\s"':)\]]+)`)

// hideLocalPaths keeps the bridge's disk out of an event's data: a source link that is a
// file:// URL or a local path is dropped (a localdir source's), and local paths in the bridge's
// own texts (reason, error: an os error names the file) are cut to their last element
// ("…/name.mp4"). What the user's templates produced (the transcription's external id and
// metadata, an export's location) is left as it is.
func hideLocalPaths(data map[string]any) {
	if src, ok := data["source"].(map[string]any); ok {
		if link, ok := src["link"].(string); ok && link != "" && localLink(link) {
			delete(src, "link")
		}
	}
	for _, k := range []string{"reason", "error"} {
		if s, ok := data[k].(string); ok {
			data[k] = localPathRe.ReplaceAllStringFunc(s, func(m string) string {
				g := localPathRe.FindStringSubmatch(m)
				p := strings.TrimPrefix(g[2], "file://")
				if i := strings.LastIndexAny(p, `/\`); i >= 0 {
					p = p[i+1:]
				}
				return g[1] + "…/" + p
			})
		}
	}
}

// localLink reports whether link points at the local disk: a file: URL or a path.
func localLink(link string) bool {
	if u, err := url.Parse(link); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return strings.EqualFold(u.Scheme, "file")
	}
	return true // no scheme (or a drive letter): a path
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// Run reads the bus and delivers until ctx ends: the router fans events out, and one loop per
// endpoint sends, so a slow or timing-out endpoint delays only its own deliveries. It fails
// when the router cannot start.
func (r *Relay) Run(ctx context.Context, interval time.Duration) error {
	r.init()
	router, err := r.router()
	if err != nil {
		return err
	}
	r.consumer.start(router, r.now())
	r.abandon(ctx)
	var wg sync.WaitGroup
	for _, ep := range r.Endpoints {
		wg.Go(func() {
			for {
				n, err := r.deliverEndpoint(ctx, ep.Name)
				if err != nil && ctx.Err() == nil {
					r.Log.Error("deliver", "endpoint", ep.Name, "err", err)
				}
				wait := interval
				if n > 0 {
					wait = min(wait, 10*time.Millisecond) // more may be due; a short pause lets them gather
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		})
	}
	err = router.Run(ctx)
	wg.Wait()
	return err
}

// abandon gives up the pending deliveries of endpoints removed from the configuration.
func (r *Relay) abandon(ctx context.Context) {
	known := make([]string, len(r.Endpoints))
	for i, e := range r.Endpoints {
		known[i] = e.Name
	}
	if n, err := r.Store.Abandon(ctx, known, r.now()); err != nil {
		r.Log.Error("abandon deliveries of removed endpoints", "err", err)
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
		if err != nil || n == 0 {
			return err
		}
	}
}
