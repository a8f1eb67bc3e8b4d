package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/tracing"
)

// Subscriber is the bus the relay reads: a Watermill subscriber that can also say how many
// messages of a topic are not acked yet (the stores' buses implement it).
type Subscriber interface {
	message.Subscriber
	// Backlog reports how many messages of topic the subscriber's group has not acked.
	Backlog(ctx context.Context, topic string) (int, error)
}

// borrowed keeps the router from closing a subscriber the relay does not own; stopping the
// router still ends its subscription (through the subscription's context).
type borrowed struct{ message.Subscriber }

// Close implements message.Subscriber and leaves the subscriber open.
func (borrowed) Close() error { return nil }

// errMalformed marks a message that no retry can handle; it goes to the poison queue.
var errMalformed = errors.New("malformed event message")

// failureEvents are the event types that report something gone wrong: their line is a WARN.
var failureEvents = map[string]bool{
	bridge.EventFailed: true, bridge.EventInsufficientBalance: true, bridge.EventReportFailed: true,
	bridge.EventHeld: true, bridge.EventSkipped: true, bridge.EventExportFailed: true, EventEndpointDisabled: true,
}

// handle fans one event out to the endpoints that want it. A redelivered message is harmless:
// deliveries are unique on event and endpoint.
func (r *Relay) handle(msg *message.Message) error {
	var ref bridge.EventRef
	if err := json.Unmarshal(msg.Payload, &ref); err != nil || ref.EventID <= 0 || ref.Type == "" {
		return fmt.Errorf("message %s: %w: %q", msg.UUID, errMalformed, msg.Payload)
	}
	targets := r.targets(ref)
	level := slog.LevelInfo
	if failureEvents[ref.Type] {
		level = slog.LevelWarn
	}
	attrs := []any{"type", ref.Type, "event_id", ref.EventID}
	if ref.JobID != "" {
		attrs = append(attrs, "job_id", ref.JobID)
	}
	if ref.TranscriptionID != "" {
		attrs = append(attrs, "transcription_id", ref.TranscriptionID)
	}
	if ref.JobID != "" && tracing.Enabled() {
		attrs = append(attrs, "trace_id", tracing.TraceID(ref.JobID))
	}
	r.Log.Log(msg.Context(), level, "event", append(attrs, "endpoints", len(targets), "correlation_id", middleware.MessageCorrelationID(msg))...)
	if err := r.fanOut(msg.Context(), ref, targets); err != nil {
		if errors.Is(err, bridge.ErrUnknownEvent) {
			return fmt.Errorf("%w: %w", errMalformed, err)
		}
		return err
	}
	r.consumer.handled(r.now())
	return nil
}

// targets names the endpoints that want ref's event: those subscribed to its type, but not
// the endpoint an endpoint.* event is about (a disabled endpoint is not told it is disabled).
func (r *Relay) targets(ref bridge.EventRef) []string {
	var out []string
	for _, ep := range r.Endpoints {
		if ep.Wants(ref.Type) && ep.Name != ref.Endpoint {
			out = append(out, ep.Name)
		}
	}
	return out
}

// fanOut creates ref's deliveries: through the running engine's group commit, or in a
// transaction of its own (Flush).
func (r *Relay) fanOut(ctx context.Context, ref bridge.EventRef, targets []string) error {
	if eng := r.eng.Load(); eng != nil {
		return eng.fanOut(ctx, ref, targets)
	}
	return r.Store.FanOut(ctx, ref, targets, r.now())
}

// poisoned says which handler errors send a message to the poison queue: malformed messages
// and panics. Anything else (the store busy or down) is nacked and read again.
func (r *Relay) poisoned(err error) bool {
	var panicked *middleware.RecoveredPanicError
	if errors.Is(err, errMalformed) || errors.As(err, &panicked) {
		r.Log.Error("event message moved to the poison queue", "topic", bridge.EventsPoisonTopic, "error", err)
		return true
	}
	return false
}

// router wires the bus to handle: correlation id, poison queue, a few quick retries, and
// panic recovery, outermost first.
func (r *Relay) router() (*message.Router, error) {
	if r.Bus == nil || r.Poison == nil {
		return nil, errors.New("relay: no event bus (Bus and Poison must be set)")
	}
	logger := watermill.NewSlogLoggerWithLevelMapping(r.Log, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 30 * time.Second}, logger)
	if err != nil {
		return nil, err
	}
	poison, err := middleware.PoisonQueueWithFilter(r.Poison, bridge.EventsPoisonTopic, r.poisoned)
	if err != nil {
		return nil, err
	}
	router.AddMiddleware(
		middleware.CorrelationID,
		poison,
		middleware.Retry{MaxRetries: 3, InitialInterval: 100 * time.Millisecond, Multiplier: 2, Logger: logger}.Middleware,
		middleware.Recoverer,
	)
	router.AddConsumerHandler("fan-out", bridge.EventsTopic, borrowed{r.Bus}, r.handle)
	return router, nil
}

// drainBus runs the router until the bus holds no unacked event, then stops it.
func (r *Relay) drainBus(ctx context.Context) error {
	if n, err := r.Bus.Backlog(ctx, bridge.EventsTopic); err != nil || n == 0 {
		return err
	}
	router, err := r.router()
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- router.Run(rctx) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return fmt.Errorf("relay: event router stopped: %w", err)
		case <-ctx.Done():
			cancel()
			<-done
			return ctx.Err()
		case <-tick.C:
		}
		n, err := r.Bus.Backlog(ctx, bridge.EventsTopic)
		if err != nil || n == 0 {
			cancel()
			<-done
			return err
		}
	}
}

// Settings for the relay's bus subscriber (consumer group "relay"), for the wiring to apply.
const (
	// BusInFlight is how many event messages the relay takes at once from a bus that can hand
	// several out before the first is acked (the stores' buses, package sqlbus: InFlight): their fan-outs go
	// to the store in one group commit. Claims keep each job's events in order whatever order
	// the fan-outs commit in. Under a backlog the lanes are fed by what one commit fans out:
	// a whole read (the bus's default BatchSize, 100) keeps them fed while the commit runs,
	// with lanes twice as deep (LaneRounds): the drain ran 3% faster than at 64.
	BusInFlight = 100
	// BusPollInterval is how often an idle subscriber looks for new events: a small read, so
	// an event reaches its endpoints within milliseconds of its commit.
	BusPollInterval = 10 * time.Millisecond
	// BusLease is how long the relay's reader holds its group's lease without renewing it: a
	// restarted bridge (or another replica) takes the events over within seconds of a crash;
	// renewed every BusLease/3 while events are out.
	BusLease = 5 * time.Second
	// CommittersPostgres is Relay.Committers on PostgreSQL: records written beside the rest
	// of the group commit. One committer was busy 98% of a drain, recording 70% of that time.
	CommittersPostgres = 2
)
