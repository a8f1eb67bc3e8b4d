package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge"
)

// consumer is what Consuming reads: the router Run started and when a message was last
// handled.
type consumer struct {
	mu      sync.Mutex
	router  *message.Router
	started time.Time
	last    time.Time
}

// start notes the router Run is about to run, at now.
func (c *consumer) start(router *message.Router, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.router, c.started, c.last = router, now, time.Time{}
}

// handled notes a message handled at now.
func (c *consumer) handled(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = now
}

// Consuming reports whether the relay reads the bus, for readiness: nil when the event router
// of Run is running and either no event waits on the bus for the relay's consumer group or
// one was handled within the last within (counted from the router's start before the first).
// It fails naming what is wrong: no router (Run not started, or stopped), events waiting with
// none handled for that long, or the bus's own error. It asks only the bus, never an endpoint.
func (r *Relay) Consuming(ctx context.Context, within time.Duration) error {
	r.consumer.mu.Lock()
	router, started, last := r.consumer.router, r.consumer.started, r.consumer.last
	r.consumer.mu.Unlock()
	switch {
	case router == nil:
		return errors.New("the relay's event router has not started")
	case router.IsClosed():
		return errors.New("the relay's event router has stopped")
	case !router.IsRunning():
		return errors.New("the relay's event router is starting")
	}
	if r.Bus == nil {
		return errors.New("the relay has no event bus")
	}
	waiting, err := r.Bus.Backlog(ctx, bridge.EventsTopic)
	if err != nil {
		return fmt.Errorf("bus backlog: %w", err)
	}
	since := started
	if last.After(since) {
		since = last
	}
	if idle := r.now().Sub(since); waiting > 0 && idle > within {
		what := "none handled since the router started " + idle.Round(time.Second).String() + " ago"
		if !last.IsZero() {
			what = "none handled for " + idle.Round(time.Second).String()
		}
		return fmt.Errorf("%d event(s) wait on the bus, %s", waiting, what)
	}
	return nil
}
