package relay_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// flakyAPI fails the first fails GETs, then returns a completed transcription.
type flakyAPI struct {
	fails int
	calls int
}

func (a *flakyAPI) Get(_ context.Context, id string) (*api.Transcription, error) {
	a.calls++
	if a.calls <= a.fails {
		return nil, errors.New("502 service_unavailable: upstream unavailable")
	}
	return &api.Transcription{ID: id, Status: api.StatusCompleted}, nil
}

// TestFetchFailuresDoNotDeadLetter (issue 32, point 4): a full payload's transcription that the
// API fails to give, more times in a row than the endpoint's retry schedule allows attempts,
// does not dead-letter the delivery: the endpoint was never contacted, so those tries do not
// count; it is delivered, after one counted attempt, once the API answers, and the history
// keeps every try.
func TestFetchFailuresDoNotDeadLetter(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.relay.Endpoints[0]
	ep.Payload = relay.PayloadFull
	ep.RetrySchedule = []time.Duration{time.Second, time.Second}
	flaky := &flakyAPI{fails: 5}
	f.relay.API = flaky
	j := f.jobs["a"]
	j.TranscriptionID = "tr-a"
	f.emit(t, "a", bridge.EventCompleted)
	ctx := context.Background()
	for range 8 {
		f.step(t)
		f.clock.Add(5 * time.Second)
	}
	ds, err := f.store.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %d, %v; want 1", len(ds), err)
	}
	_, attempts, _ := f.store.Delivery(ctx, ds[0].ID)
	if ds[0].Status != bridge.DeliveryDelivered || ds[0].Attempts != 1 || len(attempts) != 6 || len(f.rx.received) != 1 {
		t.Errorf("after %d failed fetches: %s, %d attempts counted, %d in the history, %d received; want delivered, 1, 6, 1",
			flaky.fails, ds[0].Status, ds[0].Attempts, len(attempts), len(f.rx.received))
	}
}
