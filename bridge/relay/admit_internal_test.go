package relay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// admitting starts admit of a fan-out of one event to endpoints and returns its outcome's
// channel.
func admitting(ctx context.Context, e *engine, endpoints ...string) chan error {
	done := make(chan error, 1)
	go func() {
		done <- e.admit(ctx, fanOutReq{item: bridge.FanOutItem{Endpoints: endpoints}, done: make(chan error, 1)})
	}()
	return done
}

// stillWaiting fails t if done reports within a short while: the fan-out should be held back.
func stillWaiting(t *testing.T, done chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("admit(%s) = %v while the lane is full and draining, want it held back", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestAdmitHoldsBackOnlyForAFullDrainingLane(t *testing.T) {
	r := &Relay{Endpoints: []*Endpoint{{EndpointConfig: EndpointConfig{Name: "crm"}}, {EndpointConfig: EndpointConfig{Name: "slow"}}}, PerEndpoint: 1}
	e := newEngine(r, time.Second)
	crm, slow := e.lanes["crm"], e.lanes["slow"]
	ctx := context.Background()

	// slow is full and has recorded nothing lately (an endpoint timing out): its fan-outs go
	// to the store at once, unleased, rather than hold the bus.
	e.mu.Lock()
	slow.held, slow.recorded = slow.capacity, time.Now().Add(-time.Second)
	crm.held, crm.recorded = crm.capacity-1, time.Now().Add(time.Hour) // draining throughout
	e.mu.Unlock()
	if err := <-admitting(ctx, e, "slow"); err != nil {
		t.Fatalf("admit(slow) = %v, want nil", err)
	}
	// crm has room for one: the first fan-out takes it, the second waits for a commit's room.
	if err := <-admitting(ctx, e, "crm", "slow"); err != nil {
		t.Fatalf("admit(crm, slow) with room for one = %v, want nil", err)
	}
	second := admitting(ctx, e, "crm")
	stillWaiting(t, second, "crm")
	e.mu.Lock()
	if len(e.fanOuts) != 2 || crm.fanning != 1 || slow.fanning != 2 {
		t.Errorf("gathered %d fan-outs, crm fanning %d, slow %d; want 2, 1, 2", len(e.fanOuts), crm.fanning, slow.fanning)
	}
	crm.held -= 2 // a commit recorded two of crm's deliveries
	e.roomMade()
	e.mu.Unlock()
	if err := <-second; err != nil {
		t.Fatalf("admit(crm) after the commit's room = %v, want nil", err)
	}

	// A fan-out held back ends with its context, gathering nothing.
	e.mu.Lock()
	crm.held = crm.capacity
	e.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	held := admitting(cctx, e, "crm")
	stillWaiting(t, held, "crm")
	cancel()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Errorf("admit(crm) cancelled = %v, want context.Canceled", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.fanOuts) != 3 {
		t.Errorf("gathered %d fan-outs after the cancelled one, want 3", len(e.fanOuts))
	}
}
