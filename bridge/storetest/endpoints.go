package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// disableTransitionCases: many deliveries answered 410 at once, on one replica or several,
// disable the endpoint once and emit one endpoint.disabled; after EnableEndpoint, the next
// disable is a new transition with its own event.
var disableTransitionCases = append(concurrent("eight at once make one event", func(t *testing.T, d *db, hs []Stores) {
	errs := make([]error, 8)
	together(8, func(i int) {
		ev := bridge.Event{Type: "endpoint.disabled", Endpoint: "crm", Data: []byte(`{"endpoint":"crm"}`)}
		errs[i] = hs[i%len(hs)].DisableEndpoint(ctx, "crm", fmt.Sprint("answered 410 Gone #", i), t0, ev)
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("DisableEndpoint(crm) #%d = %v, want nil", i, err)
		}
	}
	if evs := d.pending(t); len(evs) != 1 || evs[0].Type != "endpoint.disabled" {
		t.Errorf("PendingEvents() after 8 concurrent DisableEndpoint = %d events, want one endpoint.disabled", len(evs))
	}
	if got, _ := d.DisabledEndpoints(ctx); len(got) != 1 {
		t.Errorf("DisabledEndpoints() = %v, want crm alone", got)
	}
}), testCase{"after EnableEndpoint, again one event", func(t *testing.T, d *db) {
	ev := bridge.Event{Type: "endpoint.disabled", Endpoint: "crm", Data: []byte(`{"endpoint":"crm"}`)}
	for round := range 2 {
		for i := range 3 {
			if err := d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0.Add(time.Duration(round*10+i)*time.Second), ev); err != nil {
				t.Fatalf("DisableEndpoint(crm) round %d #%d = %v", round, i, err)
			}
		}
		if evs := d.pending(t); len(evs) != round+1 {
			t.Errorf("PendingEvents() after round %d = %d events, want %d", round, len(evs), round+1)
		}
		if err := d.EnableEndpoint(ctx, "crm"); err != nil {
			t.Fatalf("EnableEndpoint(crm) = %v", err)
		}
	}
}}, testCase{"the bus carries the endpoint it is about", func(t *testing.T, d *db) {
	ev := bridge.Event{Type: "endpoint.disabled", Endpoint: "crm", Data: []byte(`{"endpoint":"crm"}`)}
	if err := d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0, ev); err != nil {
		t.Fatalf("DisableEndpoint(crm) = %v", err)
	}
	if got := d.published(t, d.Stores); len(got) != 1 || got[0].ref.Endpoint != "crm" {
		t.Errorf("EventsTopic carried %+v, want one ref naming endpoint crm", got)
	}
}})

// endpointAttemptsCases: an endpoint's newest attempts, whatever its deliveries' states.
var endpointAttemptsCases = []testCase{
	{"none", func(t *testing.T, d *db) {
		if got, err := d.EndpointAttempts(ctx, "crm", 10); err != nil || len(got) != 0 {
			t.Errorf("EndpointAttempts(crm, 10) = %+v, %v; want none", got, err)
		}
	}},
	{"newest first, dead and pending alike, other endpoints apart", func(t *testing.T, d *db) {
		evs := d.events(t, 14)
		for i, e := range evs {
			ds := d.fanOut(t, e, t0, "crm", "erp")
			status := bridge.DeliveryPending // the newest 10 stay pending, never tried
			if i < 4 {
				status = bridge.DeliveryDead // the 4 oldest answered 410
			}
			if i < 4 {
				dl := ds[0]
				dl.Status, dl.Attempts = status, 1
				a := bridge.Attempt{At: t0.Add(time.Duration(i) * time.Second), Status: 410, Error: "gone"}
				if err := d.Record(ctx, &dl, a); err != nil {
					t.Fatalf("Record(%s) = %v", dl.ID, err)
				}
				d.record(t, ds[1], bridge.DeliveryDelivered, t0, t0.Add(time.Hour))
			}
		}
		got, err := d.EndpointAttempts(ctx, "crm", 3)
		if err != nil || len(got) != 3 {
			t.Fatalf("EndpointAttempts(crm, 3) = %+v, %v; want 3", got, err)
		}
		for i, a := range got {
			want := d.find(t, evs[3-i].ID, "crm")
			if a.DeliveryID != want.ID || a.Status != 410 || a.Error != "gone" || !a.At.Equal(t0.Add(time.Duration(3-i)*time.Second)) || a.Type != want.Type {
				t.Errorf("EndpointAttempts(crm, 3)[%d] = %+v, want the 410 of delivery %s at %v", i, a, want.ID, t0.Add(time.Duration(3-i)*time.Second))
			}
		}
	}},
}
