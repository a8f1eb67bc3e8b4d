package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var claimCases = append([]testCase{
	{"due deliveries, oldest first, leased", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		d.fanOut(t, evs[0], t0, "crm")
		d.fanOut(t, evs[1], t0, "crm")
		got := d.claim(t, d.Stores, "crm", t0, time.Minute, 10)
		if len(got) != 2 || got[0].EventID != evs[0].ID || got[1].EventID != evs[1].ID || got[0].WebhookID == "" {
			t.Errorf("Claim(crm, t0) = %s, want events %d and %d", deliveryIDs(got), evs[0].ID, evs[1].ID)
		}
		if again := d.claim(t, d.Stores, "crm", t0.Add(30*time.Second), time.Minute, 10); len(again) != 0 {
			t.Errorf("Claim(crm) within the lease = %s, want none", deliveryIDs(again))
		}
	}},
	{"nothing due", func(t *testing.T, d *db) {
		if got := d.claim(t, d.Stores, "crm", t0, time.Minute, 10); len(got) != 0 {
			t.Errorf("Claim(crm) on an empty store = %s, want none", deliveryIDs(got))
		}
		dl := d.fanOut(t, d.events(t, 1)[0], t0, "crm")[0]
		d.record(t, dl, bridge.DeliveryPending, t0.Add(5*time.Minute), t0)
		if got := d.claim(t, d.Stores, "crm", t0.Add(4*time.Minute), time.Minute, 10); len(got) != 0 {
			t.Errorf("Claim(crm) before the retry is due = %s, want none", deliveryIDs(got))
		}
		if got := d.claim(t, d.Stores, "crm", t0.Add(5*time.Minute+time.Second), time.Minute, 10); len(got) != 1 {
			t.Fatalf("Claim(crm) once the retry is due = %s, want the delivery", deliveryIDs(got))
		}
		d.record(t, dl, bridge.DeliveryDelivered, time.Time{}, t0.Add(6*time.Minute))
		for _, status := range []bridge.DeliveryStatus{bridge.DeliveryDelivered, bridge.DeliveryDead} {
			dl := d.fanOut(t, d.jobEvents(t, string(status), 1)[0], t0, "crm")[0]
			d.record(t, dl, status, time.Time{}, t0)
			if got := d.claim(t, d.Stores, "crm", t0.Add(time.Hour), time.Minute, 10); len(got) != 0 {
				t.Errorf("Claim(crm) with a %s delivery = %s, want none", status, deliveryIDs(got))
			}
		}
	}},
	{"one endpoint or all", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm", "erp")
		if got := d.claim(t, d.Stores, "erp", t0, time.Minute, 10); len(got) != 1 || got[0].Endpoint != "erp" {
			t.Errorf("Claim(erp) = %s, want erp's alone", deliveryIDs(got))
		}
		if got := d.claim(t, d.Stores, "", t0, time.Minute, 10); len(got) != 1 || got[0].Endpoint != "crm" {
			t.Errorf("Claim(all) after erp's was leased = %s, want crm's", deliveryIDs(got))
		}
	}},
	{"up to limit", func(t *testing.T, d *db) {
		evs := d.events(t, 3)
		for _, e := range evs {
			d.fanOut(t, e, t0, "crm")
		}
		if got := d.claim(t, d.Stores, "crm", t0, time.Minute, 2); len(got) != 2 || got[0].EventID != evs[0].ID || got[1].EventID != evs[1].ID {
			t.Errorf("Claim(crm, limit 2) = %s, want the two oldest", deliveryIDs(got))
		}
		if got := d.claim(t, d.Stores, "crm", t0, time.Minute, 2); len(got) != 1 || got[0].EventID != evs[2].ID {
			t.Errorf("Claim(crm, limit 2) again = %s, want the third", deliveryIDs(got))
		}
	}},
	{"one at a time per job and endpoint", func(t *testing.T, d *db) {
		evs := d.jobEvents(t, "a", 2)
		other := d.jobEvents(t, "b", 1)[0]
		for _, e := range append(evs, other) {
			d.fanOut(t, e, t0, "crm", "erp")
		}
		first := d.claim(t, d.Stores, "crm", t0, time.Minute, 10)
		if len(first) != 2 || first[0].EventID != evs[0].ID || first[1].EventID != other.ID {
			t.Fatalf("Claim(crm) = %s, want job a's first event (%d) and job b's (%d), not a's second", deliveryIDs(first), evs[0].ID, other.ID)
		}
		d.record(t, first[1], bridge.DeliveryDelivered, time.Time{}, t0.Add(time.Second))
		again := d.claim(t, d.Stores, "crm", t0.Add(2*time.Minute), time.Minute, 10)
		if len(again) != 1 || again[0].EventID != evs[0].ID {
			t.Fatalf("Claim(crm) after the lease while a's first event is still pending = %s, want it again (its second waits)", deliveryIDs(again))
		}
		d.record(t, again[0], bridge.DeliveryPending, t0.Add(time.Hour), t0.Add(2*time.Minute))
		if got := d.claim(t, d.Stores, "crm", t0.Add(3*time.Minute), time.Minute, 10); len(got) != 0 {
			t.Errorf("Claim(crm) while a's first event waits for its retry = %s, want none (a's second waits behind it)", deliveryIDs(got))
		}
		unclaimed := again[0]
		unclaimed.LeaseUntil = time.Time{} // given up by hand, not by a claim
		d.record(t, unclaimed, bridge.DeliveryDead, time.Time{}, t0.Add(4*time.Minute))
		if got := d.claim(t, d.Stores, "crm", t0.Add(5*time.Minute), time.Minute, 10); len(got) != 1 || got[0].EventID != evs[1].ID {
			t.Errorf("Claim(crm) once a's first event is dead = %s, want a's second (%d)", deliveryIDs(got), evs[1].ID)
		}
		if got := d.claim(t, d.Stores, "erp", t0.Add(5*time.Minute), time.Minute, 10); len(got) != 2 {
			t.Errorf("Claim(erp) = %s, want a's first and b's: the order holds per endpoint", deliveryIDs(got))
		}
	}},
	{"not from a disabled endpoint", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm", "erp")
		if err := d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0); err != nil {
			t.Fatal(err)
		}
		if got := d.claim(t, d.Stores, "crm", t0, time.Minute, 10); len(got) != 0 {
			t.Errorf("Claim(crm) while crm is disabled = %s, want none", deliveryIDs(got))
		}
		if got := d.claim(t, d.Stores, "", t0, time.Minute, 10); len(got) != 1 || got[0].Endpoint != "erp" {
			t.Errorf("Claim(all) while crm is disabled = %s, want erp's alone", deliveryIDs(got))
		}
	}},
}, append(concurrent("concurrent claimers share the work", func(t *testing.T, d *db, hs []Stores) {
	evs := d.events(t, 5)
	for _, e := range evs {
		d.fanOut(t, e, t0, "crm")
	}
	claimed := map[string]int{}
	var mu sync.Mutex
	together(4, func(i int) {
		got, err := hs[i%len(hs)].Claim(ctx, "crm", t0, time.Minute, 2)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("Claim(crm) %d = %v", i, err)
		}
		for _, dl := range got {
			claimed[dl.ID]++
		}
	})
	if len(claimed) != 5 {
		t.Errorf("4 concurrent Claim(crm, limit 2) of 5 deliveries leased %d of them, want all 5", len(claimed))
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %s was leased by %d claimers at once, want 1", id, n)
		}
	}
}), concurrent("a lease runs out and one claimer takes over", func(t *testing.T, d *db, hs []Stores) {
	const lease = time.Minute
	dl := d.fanOut(t, d.events(t, 1)[0], t0, "crm")[0]
	d.claim(t, hs[0], "crm", t0, lease, 10)
	last := hs[len(hs)-1]
	if got := d.claim(t, last, "crm", t0.Add(lease-time.Second), lease, 10); len(got) != 0 {
		t.Fatalf("Claim(crm) a second before the lease ends = %s, want none", deliveryIDs(got))
	}
	var mu sync.Mutex
	var taken []bridge.Delivery
	together(4, func(i int) {
		got, err := hs[i%len(hs)].Claim(ctx, "crm", t0.Add(lease+time.Second), lease, 10)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("Claim(crm) %d after the lease = %v", i, err)
		}
		taken = append(taken, got...)
	})
	if len(taken) != 1 || taken[0].ID != dl.ID || taken[0].WebhookID != dl.WebhookID {
		t.Errorf("4 concurrent Claim(crm) after the lease = %s, want delivery %s once, with its webhook-id", deliveryIDs(taken), dl.ID)
	}
})...)...)

// claim leases deliveries on handle s, failing the test on an error.
func (d *db) claim(t *testing.T, s Stores, endpoint string, now time.Time, lease time.Duration, limit int) []bridge.Delivery {
	t.Helper()
	got, err := s.Claim(ctx, endpoint, now, lease, limit)
	if err != nil {
		t.Fatalf("Claim(%q, %v) = %v", endpoint, now, err)
	}
	return got
}

var replayCases = []testCase{
	{"keeps a running lease", func(t *testing.T, d *db) {
		// An attempt is in flight when an operator replays the delivery: nobody else may claim
		// it until that attempt is recorded or its lease runs out.
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		inFlight := d.claim(t, d.Stores, "crm", t0, time.Hour, 1)[0]
		if n, err := d.Replay(ctx, []string{inFlight.ID}, bridge.DeliveryFilter{}, t0.Add(time.Minute)); err != nil || n != 1 {
			t.Fatalf("Replay(%s) = %d, %v; want 1", inFlight.ID, n, err)
		}
		if c := d.claim(t, d.another(), "crm", t0.Add(2*time.Minute), time.Hour, 10); len(c) != 0 {
			t.Errorf("Claim(crm) while the replayed delivery's attempt is in flight = %s, want none", deliveryIDs(c))
		}
		inFlight.Status, inFlight.Attempts = bridge.DeliveryDelivered, 1
		if err := d.Record(ctx, &inFlight, bridge.Attempt{At: t0.Add(3 * time.Minute), Status: 200}); err != nil {
			t.Errorf("Record(the attempt in flight) after Replay = %v, want nil", err)
		}
	}},
	{"by id", func(t *testing.T, d *db) {
		dl := d.fanOut(t, d.events(t, 1)[0], t0, "crm")[0]
		d.record(t, dl, bridge.DeliveryDead, time.Time{}, t0)
		now := t0.Add(time.Hour)
		if n, err := d.Replay(ctx, []string{dl.ID}, bridge.DeliveryFilter{}, now); err != nil || n != 1 {
			t.Fatalf("Replay(%s) = %d, %v; want 1", dl.ID, n, err)
		}
		got, attempts, _ := d.Delivery(ctx, dl.ID)
		if got.Status != bridge.DeliveryPending || got.Attempts != 0 || !got.NextAttemptAt.Equal(now) || got.WebhookID != dl.WebhookID || len(attempts) != 1 {
			t.Errorf("Delivery(%s) after Replay = %+v, %d attempts; want pending, 0 attempts, due %v, webhook-id %s, its past attempt kept",
				dl.ID, got, len(attempts), now, dl.WebhookID)
		}
		if c := d.claim(t, d.Stores, "crm", now, time.Minute, 10); len(c) != 1 || c[0].ID != dl.ID {
			t.Errorf("Claim(crm) after Replay = %s, want %s", deliveryIDs(c), dl.ID)
		}
	}},
	{"by filter", func(t *testing.T, d *db) {
		evs := d.events(t, 3)
		for i, e := range evs {
			for _, dl := range d.fanOut(t, e, t0.Add(time.Duration(i)*time.Hour), "crm", "erp") {
				status := bridge.DeliveryDead
				if i == 2 && dl.Endpoint == "crm" {
					status = bridge.DeliveryDelivered
				}
				d.record(t, dl, status, time.Time{}, t0.Add(3*time.Hour))
			}
		}
		now := t0.Add(4 * time.Hour)
		for _, tc := range []struct {
			f    bridge.DeliveryFilter
			want int
		}{
			{bridge.DeliveryFilter{Endpoint: "erp", Status: bridge.DeliveryDead, Since: t0.Add(time.Hour), Until: t0.Add(2 * time.Hour)}, 1},
			{bridge.DeliveryFilter{Endpoint: "crm", Status: bridge.DeliveryDead}, 2},
			{bridge.DeliveryFilter{Endpoint: "crm", Status: bridge.DeliveryDead}, 0},
			{bridge.DeliveryFilter{Endpoint: "none", Status: bridge.DeliveryDead}, 0},
		} {
			if n, err := d.Replay(ctx, nil, tc.f, now); err != nil || n != tc.want {
				t.Errorf("Replay(%+v) = %d, %v; want %d", tc.f, n, err, tc.want)
			}
		}
		if got := d.deliveries(t, bridge.DeliveryFilter{Status: bridge.DeliveryDead}); len(got) != 2 {
			t.Errorf("dead deliveries after the replays = %s, want erp's of events 1 and 3", deliveryIDs(got))
		}
		if got := d.deliveries(t, bridge.DeliveryFilter{Status: bridge.DeliveryDelivered}); len(got) != 1 {
			t.Errorf("delivered deliveries after the replays = %s, want the one delivered", deliveryIDs(got))
		}
	}},
	{"ids and a filter together", func(t *testing.T, d *db) {
		ds := d.fanOut(t, d.events(t, 1)[0], t0, "crm", "erp")
		d.record(t, ds[0], bridge.DeliveryDead, time.Time{}, t0)
		d.record(t, ds[1], bridge.DeliveryDelivered, time.Time{}, t0)
		if n, err := d.Replay(ctx, []string{ds[0].ID, ds[1].ID}, bridge.DeliveryFilter{Status: bridge.DeliveryDead}, t0); err != nil || n != 1 {
			t.Errorf("Replay(both, dead only) = %d, %v; want 1", n, err)
		}
		if got, _, _ := d.Delivery(ctx, ds[1].ID); got.Status != bridge.DeliveryDelivered {
			t.Errorf("Delivery(%s) = %s, want it still delivered", ds[1].ID, got.Status)
		}
	}},
	{"unknown id", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		if n, err := d.Replay(ctx, []string{"missing"}, bridge.DeliveryFilter{}, t0); err != nil || n != 0 {
			t.Errorf("Replay(missing) = %d, %v; want 0, nil", n, err)
		}
	}},
}

var disableEndpointCases = []testCase{
	{"switches it off, saying why", func(t *testing.T, d *db) {
		ev := bridge.Event{Type: "endpoint.disabled", Data: []byte(`{"endpoint":"crm"}`)}
		if err := d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0, ev); err != nil {
			t.Fatalf("DisableEndpoint(crm) = %v", err)
		}
		if got, err := d.DisabledEndpoints(ctx); err != nil || len(got) != 1 || got["crm"] != "answered 410 Gone" {
			t.Errorf("DisabledEndpoints() = %v, %v; want crm: answered 410 Gone", got, err)
		}
		if evs := d.pending(t); len(evs) != 1 || evs[0].Type != ev.Type || !sameJSON(evs[0].Data, ev.Data) || !evs[0].CreatedAt.Equal(t0) {
			t.Errorf("PendingEvents() after DisableEndpoint = %+v, want its event at %v", evs, t0)
		}
	}},
	{"twice keeps the first reason and emits once", func(t *testing.T, d *db) {
		ev := bridge.Event{Type: "endpoint.disabled", Endpoint: "crm", Data: []byte(`{"endpoint":"crm"}`)}
		d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0, ev)
		if err := d.DisableEndpoint(ctx, "crm", "disabled by hand", t0.Add(time.Minute), ev); err != nil {
			t.Fatalf("DisableEndpoint(crm) again = %v", err)
		}
		if got, err := d.DisabledEndpoints(ctx); err != nil || len(got) != 1 || got["crm"] != "answered 410 Gone" {
			t.Errorf("DisabledEndpoints() = %v, %v; want crm: answered 410 Gone", got, err)
		}
		if evs := d.pending(t); len(evs) != 1 {
			t.Errorf("PendingEvents() after DisableEndpoint twice = %d events, want 1", len(evs))
		}
	}},
	{"seen by another handle", func(t *testing.T, d *db) {
		other := d.another()
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0)
		if got := d.claim(t, other, "", t0, time.Minute, 10); len(got) != 0 {
			t.Errorf("Claim(all) on another handle while crm is disabled = %s, want none", deliveryIDs(got))
		}
	}},
}

var enableEndpointCases = []testCase{
	{"switches it on again", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0)
		if err := d.EnableEndpoint(ctx, "crm"); err != nil {
			t.Fatalf("EnableEndpoint(crm) = %v", err)
		}
		if got, err := d.DisabledEndpoints(ctx); err != nil || len(got) != 0 {
			t.Errorf("DisabledEndpoints() after EnableEndpoint(crm) = %v, %v; want none", got, err)
		}
		if got := d.claim(t, d.Stores, "crm", t0, time.Minute, 10); len(got) != 1 {
			t.Errorf("Claim(crm) after EnableEndpoint(crm) = %s, want its delivery", deliveryIDs(got))
		}
	}},
	{"an endpoint that is on", func(t *testing.T, d *db) {
		d.DisableEndpoint(ctx, "erp", "answered 410 Gone", t0)
		for _, name := range []string{"crm", "crm"} {
			if err := d.EnableEndpoint(ctx, name); err != nil {
				t.Errorf("EnableEndpoint(%s) while it is on = %v, want nil", name, err)
			}
		}
		if got, _ := d.DisabledEndpoints(ctx); len(got) != 1 || got["erp"] == "" {
			t.Errorf("DisabledEndpoints() = %v, want erp alone", got)
		}
	}},
}

var disabledEndpointsCases = []testCase{
	{"none", func(t *testing.T, d *db) {
		if got, err := d.DisabledEndpoints(ctx); err != nil || len(got) != 0 {
			t.Errorf("DisabledEndpoints() = %v, %v; want none", got, err)
		}
	}},
	{"each with its reason", func(t *testing.T, d *db) {
		d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0)
		d.DisableEndpoint(ctx, "erp", "disabled by hand", t0)
		got, err := d.DisabledEndpoints(ctx)
		if err != nil || len(got) != 2 || got["crm"] != "answered 410 Gone" || got["erp"] != "disabled by hand" {
			t.Errorf("DisabledEndpoints() = %v, %v; want crm and erp with their reasons", got, err)
		}
	}},
}
