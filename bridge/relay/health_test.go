package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConsumingFollowsTheRouter: not consuming before Run, consuming while it runs (events
// handled), not consuming once it stopped.
func TestConsumingFollowsTheRouter(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := f.relay.Consuming(ctx, time.Minute); err == nil || !strings.Contains(err.Error(), "has not started") {
		t.Errorf("Consuming before Run = %v, want not started", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.relay.Run(rctx, 10*time.Millisecond) }()
	waitFor(t, "the router to run", func() bool { return f.relay.Consuming(ctx, time.Minute) == nil })
	f.emit(t, "a", bridge.EventUploaded)
	waitFor(t, "the delivery", func() bool { f.rx.mu.Lock(); defer f.rx.mu.Unlock(); return len(f.rx.received) == 1 })
	if err := f.relay.Consuming(ctx, time.Minute); err != nil {
		t.Errorf("Consuming while running = %v, want nil", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if err := f.relay.Consuming(ctx, time.Minute); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Consuming after Run = %v, want stopped", err)
	}
}

// stuckBus is a bus whose subscription never yields a message while it reports a backlog.
type stuckBus struct{ waiting int }

func (stuckBus) Subscribe(ctx context.Context, _ string) (<-chan *message.Message, error) {
	ch := make(chan *message.Message)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}

func (b stuckBus) Backlog(context.Context, string) (int, error) { return b.waiting, nil }

func (stuckBus) Close() error { return nil }

// TestConsumingNamesAStuckBus: a router that runs while events wait and none is handled for
// longer than the window is not consuming, and says how many wait and for how long.
func TestConsumingNamesAStuckBus(t *testing.T) {
	f := newFixture(t, nil)
	r := &relay.Relay{Store: f.store, Bus: stuckBus{waiting: 5}, Poison: nopPublisher{}, Now: f.clock.Now}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, 10*time.Millisecond) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the router to run", func() bool { return r.Consuming(ctx, time.Minute) == nil })
	f.clock.Add(2 * time.Minute)
	err := r.Consuming(ctx, time.Minute)
	if err == nil || err.Error() != "5 event(s) wait on the bus, none handled since the router started 2m0s ago" {
		t.Errorf("Consuming of a stuck bus = %v", err)
	}
}

// nopPublisher drops what it is given.
type nopPublisher struct{}

func (nopPublisher) Publish(string, ...*message.Message) error { return nil }
func (nopPublisher) Close() error                              { return nil }
