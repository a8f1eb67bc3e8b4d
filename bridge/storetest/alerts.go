package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

func failing(name string) bridge.EndpointAlert {
	return bridge.EndpointAlert{Name: name, Since: t0, AlertedAt: t0.Add(time.Hour), Error: "answered 503"}
}

var failingEvent = bridge.Event{Type: "endpoint.failing", Data: []byte(`{"endpoint":"crm"}`)}

var alertEndpointCases = []testCase{
	{"marks it and writes its event", func(t *testing.T, d *db) {
		if ok, err := d.AlertEndpoint(ctx, failing("crm"), failingEvent); err != nil || !ok {
			t.Fatalf("AlertEndpoint(crm) = %v, %v; want true", ok, err)
		}
		got, err := d.FailingEndpoints(ctx)
		if want := failing("crm"); err != nil || len(got) != 1 || got[0].Name != "crm" || !got[0].Since.Equal(want.Since) ||
			!got[0].AlertedAt.Equal(want.AlertedAt) || got[0].Error != want.Error {
			t.Errorf("FailingEndpoints() = %+v, %v; want %+v", got, err, want)
		}
		if evs := d.pending(t); len(evs) != 1 || evs[0].Type != failingEvent.Type || !evs[0].CreatedAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("PendingEvents() after AlertEndpoint = %+v, want its event at %v", evs, t0.Add(time.Hour))
		}
	}},
	{"a second time writes nothing", func(t *testing.T, d *db) {
		d.AlertEndpoint(ctx, failing("crm"), failingEvent)
		later := failing("crm")
		later.AlertedAt = later.AlertedAt.Add(time.Minute)
		if ok, err := d.AlertEndpoint(ctx, later, failingEvent); err != nil || ok {
			t.Errorf("AlertEndpoint(crm) again = %v, %v; want false", ok, err)
		}
		if evs := d.pending(t); len(evs) != 1 {
			t.Errorf("PendingEvents() = %d events, want 1", len(evs))
		}
	}},
	{"replicas racing: exactly one marks it", func(t *testing.T, d *db) {
		handles := []Stores{d.Stores, d.another(), d.Stores, d.another()}
		var wg sync.WaitGroup
		var mu sync.Mutex
		marked := 0
		for _, h := range handles {
			wg.Go(func() {
				ok, err := h.AlertEndpoint(ctx, failing("crm"), failingEvent)
				if err != nil {
					t.Errorf("AlertEndpoint(crm) = %v", err)
				}
				if ok {
					mu.Lock()
					marked++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if evs := d.pending(t); marked != 1 || len(evs) != 1 {
			t.Errorf("%d replicas marked crm, %d events; want 1 and 1", marked, len(evs))
		}
	}},
}

var endpointRecoveredCases = []testCase{
	{"ends the spell: the next one alerts again", func(t *testing.T, d *db) {
		d.AlertEndpoint(ctx, failing("crm"), failingEvent)
		d.AlertEndpoint(ctx, failing("erp"), failingEvent)
		if ok, err := d.EndpointRecovered(ctx, "crm"); err != nil || !ok {
			t.Fatalf("EndpointRecovered(crm) = %v, %v; want true", ok, err)
		}
		if got, _ := d.FailingEndpoints(ctx); len(got) != 1 || got[0].Name != "erp" {
			t.Errorf("FailingEndpoints() = %+v, want erp only", got)
		}
		if ok, err := d.AlertEndpoint(ctx, failing("crm"), failingEvent); err != nil || !ok {
			t.Errorf("AlertEndpoint(crm) after it recovered = %v, %v; want true", ok, err)
		}
	}},
	{"an endpoint not marked", func(t *testing.T, d *db) {
		if ok, err := d.EndpointRecovered(ctx, "crm"); err != nil || ok {
			t.Errorf("EndpointRecovered(crm) not marked = %v, %v; want false", ok, err)
		}
	}},
}

var replayMissedCases = []testCase{
	{"leaves the delivered ones", func(t *testing.T, d *db) {
		evs := d.events(t, 3)
		statuses := []bridge.DeliveryStatus{bridge.DeliveryDelivered, bridge.DeliveryDead, bridge.DeliveryPending}
		var ids []string
		for i, e := range evs {
			dl := d.fanOut(t, e, t0.Add(time.Duration(i)*time.Minute), "crm")[0]
			d.record(t, dl, statuses[i], t0.Add(time.Hour), t0.Add(time.Duration(i)*time.Minute))
			ids = append(ids, dl.ID)
		}
		now := t0.Add(2 * time.Hour)
		if n, err := d.Replay(ctx, nil, bridge.DeliveryFilter{Endpoint: "crm", Since: t0, Missed: true}, now); err != nil || n != 2 {
			t.Fatalf("Replay(crm, missed) = %d, %v; want 2", n, err)
		}
		for i, id := range ids {
			got, _, _ := d.Delivery(ctx, id)
			want := bridge.DeliveryPending
			if i == 0 {
				want = bridge.DeliveryDelivered
			}
			if got.Status != want || (i > 0 && !got.NextAttemptAt.Equal(now)) {
				t.Errorf("Delivery(%d) after Replay(missed) = %s due %v, want %s", i, got.Status, got.NextAttemptAt, want)
			}
		}
		if ds, _ := d.Deliveries(ctx, bridge.DeliveryFilter{Missed: true}); len(ds) != 2 {
			t.Errorf("Deliveries(missed) = %d, want 2", len(ds))
		}
	}},
}
