package relay_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
)

// TestSweepFansOutWhatTheBusLost: the relay group's messages are read and acked without a
// fan-out (a message lost, or poisoned by a panic), so the bus brings the relay nothing; Run's
// sweep fans the events out from the outbox once they are older than SweepAfter, and both are
// delivered, in order.
func TestSweepFansOutWhatTheBusLost(t *testing.T) {
	f := newFixture(t, nil)
	f.relay.Now = time.Now // the events keep the fixture's time: older than SweepAfter soon
	f.emit(t, "a", bridge.EventUploaded)
	f.emit(t, "a", bridge.EventCompleted)

	// Another subscriber of the relay's group takes both messages and acks them.
	thief, _, err := f.store.Bus(bus.SubscriberConfig{ConsumerGroup: "relay", PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	msgs, err := thief.Subscribe(ctx, bridge.EventsTopic)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		(<-msgs).Ack()
	}
	waitFor(t, "the stolen messages acked", func() bool { n, _ := thief.Backlog(context.Background(), bridge.EventsTopic); return n == 0 })
	cancel()
	thief.Close()

	f.relay.SweepAfter = 200 * time.Millisecond
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.relay.Run(runCtx, 20*time.Millisecond) }()
	defer func() { stop(); <-done }()
	waitFor(t, "both events delivered", func() bool { return len(f.rx.types()) == 2 })
	if got := f.rx.types(); got[0] != bridge.EventUploaded || got[1] != bridge.EventCompleted {
		t.Errorf("received %v, want %s then %s", got, bridge.EventUploaded, bridge.EventCompleted)
	}
	pending, err := f.store.PendingEvents(context.Background(), 10)
	if err != nil || len(pending) != 0 {
		t.Errorf("PendingEvents() = %v, %v; want none after the sweep", pending, err)
	}
}

// types lists the types of the messages received, in order.
func (rx *receiver) types() []string {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	var out []string
	for _, m := range rx.received {
		out = append(out, m["type"].(string))
	}
	return out
}

// TestStopGivesQueuedDeliveriesBack: Run stops while a slow endpoint's lane still holds
// claimed deliveries; they are given back at once (not left leased for two minutes), so the
// next claim finds them.
func TestStopGivesQueuedDeliveriesBack(t *testing.T) {
	f := newFixture(t, func(int, map[string]any) (int, string) { time.Sleep(300 * time.Millisecond); return 200, "" })
	f.relay.PerEndpoint = 1
	f.relay.Now = time.Now
	added, err := f.store.AddRecordings(context.Background(), "inbox", manyRecordings(8), "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range added {
		j := &added[i]
		if err := f.store.Update(context.Background(), j, j.State, "", bridge.NewEvent(bridge.EventUploaded, j, nil)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.relay.Run(ctx, 20*time.Millisecond) }()
	waitFor(t, "every event fanned out and a first request", func() bool {
		ds, _ := f.store.Deliveries(context.Background(), bridge.DeliveryFilter{Endpoint: "crm"})
		f.rx.mu.Lock()
		defer f.rx.mu.Unlock()
		return len(ds) == len(added) && f.rx.calls > 0
	})
	stop()
	<-done
	left, err := f.store.Claim(context.Background(), "crm", time.Now(), time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	f.rx.mu.Lock()
	sent := f.rx.calls
	f.rx.mu.Unlock()
	if len(left)+sent < len(added) || len(left) == 0 {
		t.Errorf("after the stop: %d sent, %d claimable again; want the %d not sent claimable at once", sent, len(left), len(added)-sent)
	}
}

// manyRecordings returns n recordings named r0…r(n-1).
func manyRecordings(n int) []connectors.Recording {
	out := make([]connectors.Recording, n)
	for i := range out {
		out[i] = connectors.Recording{ItemID: "r" + strconv.Itoa(i), Version: "1", Name: "r.wav"}
	}
	return out
}
