package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var fanOutCases = append([]testCase{
	{"one pending delivery per endpoint", func(t *testing.T, d *db) {
		e := d.events(t, 1)[0]
		now := t0.Add(time.Minute)
		if err := d.FanOut(ctx, ref(e), []string{"crm", "erp"}, now); err != nil {
			t.Fatalf("FanOut(%d, crm erp) = %v", e.ID, err)
		}
		ds := d.deliveries(t, bridge.DeliveryFilter{})
		if len(ds) != 2 || ds[0].ID == ds[1].ID || ds[0].WebhookID == "" || ds[0].WebhookID == ds[1].WebhookID {
			t.Fatalf("Deliveries() = %+v; want 2, each with its own id and webhook-id", ds)
		}
		for _, got := range ds {
			want := bridge.Delivery{ID: got.ID, EventID: e.ID, WebhookID: got.WebhookID, Type: e.Type, JobID: e.JobID,
				TranscriptionID: e.TranscriptionID, Data: e.Data, EventAt: e.CreatedAt, Status: bridge.DeliveryPending,
				NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
			if got.Endpoint != "crm" && got.Endpoint != "erp" || !sameDelivery(got, want, got.Endpoint) {
				t.Errorf("Deliveries() has %+v, want %+v to crm or erp", got, want)
			}
		}
	}},
	{"a redelivered message adds nothing", func(t *testing.T, d *db) {
		e := d.events(t, 1)[0]
		first := d.fanOut(t, e, t0, "crm", "erp")
		if err := d.FanOut(ctx, ref(e), []string{"crm", "erp"}, t0.Add(time.Hour)); err != nil {
			t.Fatalf("FanOut(%d) again = %v, want nil", e.ID, err)
		}
		if again := d.deliveries(t, bridge.DeliveryFilter{}); !sameDeliveries(again, first) {
			t.Errorf("Deliveries() after a second FanOut = %+v, want them unchanged, %+v", again, first)
		}
	}},
	{"a new endpoint is added alone", func(t *testing.T, d *db) {
		e := d.events(t, 1)[0]
		first := d.fanOut(t, e, t0, "crm")
		all := d.fanOut(t, e, t0.Add(time.Hour), "crm", "erp")
		if len(all) != 2 || !sameDeliveries(byEndpoint(all, "crm"), first) || !byEndpoint(all, "erp")[0].CreatedAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("Deliveries() after FanOut(crm) then FanOut(crm erp) = %+v; want crm's unchanged and erp's new", all)
		}
	}},
	{"unknown event", func(t *testing.T, d *db) {
		d.events(t, 1)
		if err := d.FanOut(ctx, bridge.EventRef{EventID: 9999, Type: bridge.EventHeld, JobID: "j"}, []string{"crm"}, t0); !errors.Is(err, bridge.ErrUnknownEvent) {
			t.Errorf("FanOut(9999) = %v, want ErrUnknownEvent", err)
		}
		if ds := d.deliveries(t, bridge.DeliveryFilter{}); len(ds) != 0 {
			t.Errorf("Deliveries() after FanOut of an unknown event = %+v, want none", ds)
		}
	}},
	{"no endpoint", func(t *testing.T, d *db) {
		e := d.events(t, 1)[0]
		if err := d.FanOut(ctx, ref(e), nil, t0); err != nil {
			t.Errorf("FanOut(%d, no endpoint) = %v, want nil", e.ID, err)
		}
		if ds := d.deliveries(t, bridge.DeliveryFilter{}); len(ds) != 0 {
			t.Errorf("Deliveries() = %+v, want none", ds)
		}
	}},
}, concurrent("concurrent fan-outs of one event", func(t *testing.T, d *db, hs []Stores) {
	e := d.events(t, 1)[0]
	together(8, func(i int) {
		if err := hs[i%len(hs)].FanOut(ctx, ref(e), []string{"crm", "erp"}, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Errorf("FanOut(%d) %d = %v, want nil", e.ID, i, err)
		}
	})
	if ds := d.deliveries(t, bridge.DeliveryFilter{}); len(ds) != 2 || ds[0].Endpoint == ds[1].Endpoint {
		t.Errorf("Deliveries() after 8 concurrent FanOut(crm erp) = %+v, want one to crm and one to erp", ds)
	}
})...)

var abandonCases = []testCase{
	{"pending deliveries of removed endpoints die", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		d.fanOut(t, evs[0], t0, "crm", "old")
		done := d.fanOut(t, evs[1], t0, "old")[0]
		d.record(t, done, bridge.DeliveryDelivered, time.Time{}, t0)
		n, err := d.Abandon(ctx, []string{"crm"}, t0.Add(time.Minute))
		if err != nil || n != 1 {
			t.Errorf("Abandon(crm) = %d, %v; want 1", n, err)
		}
		for _, tc := range []struct {
			event    int64
			endpoint string
			want     bridge.DeliveryStatus
		}{{evs[0].ID, "crm", bridge.DeliveryPending}, {evs[0].ID, "old", bridge.DeliveryDead}, {evs[1].ID, "old", bridge.DeliveryDelivered}} {
			got := d.find(t, tc.event, tc.endpoint)
			if got.Status != tc.want || tc.want == bridge.DeliveryDead && got.LastError == "" {
				t.Errorf("delivery of event %d to %s after Abandon(crm) = %s (%q); want %s, with the reason when dead", tc.event, tc.endpoint, got.Status, got.LastError, tc.want)
			}
		}
		if n, err := d.Abandon(ctx, []string{"crm"}, t0.Add(2*time.Minute)); err != nil || n != 0 {
			t.Errorf("Abandon(crm) again = %d, %v; want 0", n, err)
		}
	}},
	{"no endpoint known", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		d.fanOut(t, evs[0], t0, "crm", "erp")
		if n, err := d.Abandon(ctx, nil, t0); err != nil || n != 2 {
			t.Errorf("Abandon(none) = %d, %v; want 2", n, err)
		}
	}},
	{"nothing pending", func(t *testing.T, d *db) {
		if n, err := d.Abandon(ctx, []string{"crm"}, t0); err != nil || n != 0 {
			t.Errorf("Abandon(crm) on an empty store = %d, %v; want 0", n, err)
		}
	}},
}

var recordCases = []testCase{
	{"stores the attempt and the new state", func(t *testing.T, d *db) {
		dl := d.fanOut(t, d.events(t, 1)[0], t0, "crm")[0]
		first := bridge.Attempt{At: t0.Add(time.Second), Status: 503, Latency: 12.5, Response: "busy", Error: "503 Service Unavailable"}
		dl.Status, dl.Attempts, dl.NextAttemptAt = bridge.DeliveryPending, 1, t0.Add(5*time.Minute)
		if err := d.Record(ctx, &dl, first); err != nil {
			t.Fatalf("Record(%s, 503) = %v", dl.ID, err)
		}
		second := bridge.Attempt{At: t0.Add(5 * time.Minute), Status: 200, Latency: 3}
		dl.Status, dl.Attempts, dl.NextAttemptAt = bridge.DeliveryDelivered, 2, time.Time{}
		if err := d.Record(ctx, &dl, second); err != nil {
			t.Fatalf("Record(%s, 200) = %v", dl.ID, err)
		}
		got, attempts, err := d.Delivery(ctx, dl.ID)
		if err != nil || got.Status != bridge.DeliveryDelivered || got.Attempts != 2 || got.LastStatus != 200 || got.LastError != "" ||
			!got.UpdatedAt.Equal(second.At) || got.WebhookID != dl.WebhookID {
			t.Errorf("Delivery(%s) = %+v, %v; want delivered after 2 attempts, last 200 at %v", dl.ID, got, err, second.At)
		}
		if len(attempts) != 2 || !sameAttempt(attempts[0], first) || !sameAttempt(attempts[1], second) {
			t.Errorf("Delivery(%s) attempts = %+v, want %+v then %+v", dl.ID, attempts, first, second)
		}
	}},
	{"frees the lease", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		dl := d.claim(t, d.Stores, "crm", t0, time.Hour, 1)[0]
		d.record(t, dl, bridge.DeliveryPending, t0.Add(time.Second), t0)
		if got := d.claim(t, d.Stores, "crm", t0.Add(time.Second), time.Hour, 10); len(got) != 1 || got[0].ID != dl.ID {
			t.Errorf("Claim(crm) when the retry is due, before the first lease ends = %s, want %s", deliveryIDs(got), dl.ID)
		}
	}},
	{"unknown delivery", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		missing := bridge.Delivery{ID: "missing", Status: bridge.DeliveryDelivered, Attempts: 1}
		if err := d.Record(ctx, &missing, bridge.Attempt{At: t0, Status: 200}); !errors.Is(err, bridge.ErrDeliveryNotFound) {
			t.Errorf("Record(missing) = %v, want ErrDeliveryNotFound", err)
		}
		if got, attempts, err := d.Delivery(ctx, "missing"); !errors.Is(err, bridge.ErrDeliveryNotFound) || got != nil || len(attempts) != 0 {
			t.Errorf("Delivery(missing) after Record(missing) = %+v, %+v, %v; want ErrDeliveryNotFound and nothing", got, attempts, err)
		}
	}},
	{"a claimer whose lease was taken over keeps its attempt, not its state", func(t *testing.T, d *db) {
		// A relay claims the delivery, is paused past its lease; another claims it and delivers
		// it. The first, back late with a failure, must not make the delivery pending again.
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		late := d.claim(t, d.Stores, "crm", t0, time.Minute, 1)[0]
		if !late.LeaseUntil.Equal(t0.Add(time.Minute)) {
			t.Errorf("Claim(crm, lease 1m)[0].LeaseUntil = %v, want %v", late.LeaseUntil, t0.Add(time.Minute))
		}
		taker := d.claim(t, d.another(), "crm", t0.Add(2*time.Minute), time.Minute, 1)[0]
		taker.Status, taker.Attempts = bridge.DeliveryDelivered, 1
		if err := d.Record(ctx, &taker, bridge.Attempt{At: t0.Add(2 * time.Minute), Status: 200}); err != nil {
			t.Fatalf("Record(taker, 200) = %v", err)
		}
		late.Status, late.Attempts, late.NextAttemptAt = bridge.DeliveryPending, 1, t0.Add(time.Hour)
		if err := d.Record(ctx, &late, bridge.Attempt{At: t0.Add(3 * time.Minute), Status: 503}); !errors.Is(err, bridge.ErrConflict) {
			t.Errorf("Record(late claimer, 503) = %v, want ErrConflict", err)
		}
		got, attempts, _ := d.Delivery(ctx, late.ID)
		if got.Status != bridge.DeliveryDelivered || got.LastStatus != 200 || len(attempts) != 2 {
			t.Errorf("Delivery(%s) = %s, last %d, %d attempts; want delivered, last 200, both attempts kept", late.ID, got.Status, got.LastStatus, len(attempts))
		}
	}},
}

var deliveriesCases = []testCase{
	{"filters, newest first", func(t *testing.T, d *db) {
		evs := d.events(t, 3)
		d.fanOut(t, evs[0], t0, "crm")
		d.fanOut(t, evs[0], t0.Add(30*time.Second), "crm", "erp")
		d.fanOut(t, evs[1], t0.Add(time.Minute), "crm")
		last := d.fanOut(t, evs[2], t0.Add(2*time.Minute), "crm")[0]
		d.record(t, last, bridge.DeliveryDelivered, time.Time{}, t0.Add(3*time.Minute))
		number := map[int64]int{evs[0].ID: 1, evs[1].ID: 2, evs[2].ID: 3}
		name := func(dl bridge.Delivery) string { return fmt.Sprintf("%d>%s", number[dl.EventID], dl.Endpoint) }
		for _, tc := range []struct {
			f    bridge.DeliveryFilter
			want string
		}{
			{bridge.DeliveryFilter{}, "3>crm 2>crm 1>erp 1>crm"},
			{bridge.DeliveryFilter{Endpoint: "crm"}, "3>crm 2>crm 1>crm"},
			{bridge.DeliveryFilter{Endpoint: "none"}, ""},
			{bridge.DeliveryFilter{Status: bridge.DeliveryDelivered}, "3>crm"},
			{bridge.DeliveryFilter{Status: bridge.DeliveryPending, Endpoint: "crm"}, "2>crm 1>crm"},
			{bridge.DeliveryFilter{Since: t0.Add(time.Minute)}, "3>crm 2>crm"},
			{bridge.DeliveryFilter{Until: t0.Add(time.Minute)}, "1>erp 1>crm"},
			{bridge.DeliveryFilter{Since: t0.Add(30 * time.Second), Until: t0.Add(2 * time.Minute)}, "2>crm 1>erp"},
			{bridge.DeliveryFilter{Limit: 2}, "3>crm 2>crm"},
		} {
			got, err := d.Deliveries(ctx, tc.f)
			var names []string
			for _, dl := range got {
				names = append(names, name(dl))
			}
			if err != nil || strings.Join(names, " ") != tc.want {
				t.Errorf("Deliveries(%+v) = [%s], %v; want [%s]", tc.f, strings.Join(names, " "), err, tc.want)
			}
		}
	}},
	{"empty store", func(t *testing.T, d *db) {
		if got, err := d.Deliveries(ctx, bridge.DeliveryFilter{}); err != nil || len(got) != 0 {
			t.Errorf("Deliveries() = %+v, %v; want none", got, err)
		}
	}},
}

var deliveryCases = []testCase{
	{"with no attempt yet", func(t *testing.T, d *db) {
		want := d.fanOut(t, d.events(t, 1)[0], t0, "crm")[0]
		got, attempts, err := d.Delivery(ctx, want.ID)
		if err != nil || got == nil || !sameDelivery(*got, want, "crm") || len(attempts) != 0 {
			t.Errorf("Delivery(%s) = %+v, %+v, %v; want %+v and no attempt", want.ID, got, attempts, err, want)
		}
	}},
	{"unknown id", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		if got, attempts, err := d.Delivery(ctx, "missing"); err == nil || got != nil || len(attempts) != 0 {
			t.Errorf("Delivery(missing) = %+v, %+v, %v; want nil, none, an error", got, attempts, err)
		}
	}},
}

// events writes n events, each of its own job (items e0, e1, …), at t0, and returns them as
// stored, oldest first.
func (d *db) events(t *testing.T, n int) []bridge.Event {
	t.Helper()
	for i := range n {
		j := d.add(t, "inbox", t0, rec(fmt.Sprint("e", i), "1"))[0]
		j.TranscriptionID = fmt.Sprint("tr-", i)
		d.move(t, &j, bridge.StateQueued, t0, bridge.NewEvent(bridge.EventUploaded, &j, map[string]any{"n": i}))
	}
	return d.pending(t)
}

// jobEvents writes n events of one new job (item), at t0, and returns them, oldest first.
func (d *db) jobEvents(t *testing.T, item string, n int) []bridge.Event {
	t.Helper()
	j := d.add(t, "inbox", t0, rec(item, "1"))[0]
	var evs []bridge.Event
	for i := range n {
		evs = append(evs, bridge.NewEvent(bridge.EventReportCompleted, &j, map[string]any{"n": i}))
	}
	d.move(t, &j, bridge.StateDone, t0, evs...)
	var out []bridge.Event
	for _, e := range d.pending(t) {
		if e.JobID == j.ID {
			out = append(out, e)
		}
	}
	return out
}

func (d *db) pending(t *testing.T) []bridge.Event {
	t.Helper()
	evs, err := d.PendingEvents(ctx, 1000)
	if err != nil {
		t.Fatalf("PendingEvents(1000) = %v", err)
	}
	return evs
}

func ref(e bridge.Event) bridge.EventRef {
	return bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID, TranscriptionID: e.TranscriptionID}
}

// fanOut fans e out to endpoints at now and returns the deliveries of e, ordered by endpoint.
func (d *db) fanOut(t *testing.T, e bridge.Event, now time.Time, endpoints ...string) []bridge.Delivery {
	t.Helper()
	if err := d.FanOut(ctx, ref(e), endpoints, now); err != nil {
		t.Fatalf("FanOut(%d, %v) = %v", e.ID, endpoints, err)
	}
	var out []bridge.Delivery
	for _, dl := range d.deliveries(t, bridge.DeliveryFilter{}) {
		if dl.EventID == e.ID {
			out = append(out, dl)
		}
	}
	return out
}

// deliveries lists deliveries matching f, ordered by event and endpoint.
func (d *db) deliveries(t *testing.T, f bridge.DeliveryFilter) []bridge.Delivery {
	t.Helper()
	ds, err := d.Deliveries(ctx, f)
	if err != nil {
		t.Fatalf("Deliveries(%+v) = %v", f, err)
	}
	sort.Slice(ds, func(i, j int) bool {
		return ds[i].EventID < ds[j].EventID || ds[i].EventID == ds[j].EventID && ds[i].Endpoint < ds[j].Endpoint
	})
	return ds
}

// find returns the delivery of event to endpoint.
func (d *db) find(t *testing.T, event int64, endpoint string) bridge.Delivery {
	t.Helper()
	for _, dl := range d.deliveries(t, bridge.DeliveryFilter{Endpoint: endpoint}) {
		if dl.EventID == event {
			return dl
		}
	}
	t.Fatalf("no delivery of event %d to %s", event, endpoint)
	return bridge.Delivery{}
}

// record stores an attempt at `at` that leaves dl in status, due again at next.
func (d *db) record(t *testing.T, dl bridge.Delivery, status bridge.DeliveryStatus, next, at time.Time) {
	t.Helper()
	dl.Status, dl.NextAttemptAt, dl.Attempts = status, next, dl.Attempts+1
	if err := d.Record(ctx, &dl, bridge.Attempt{At: at, Status: 500}); err != nil {
		t.Fatalf("Record(%s, %s) = %v", dl.ID, status, err)
	}
}

func byEndpoint(ds []bridge.Delivery, endpoint string) []bridge.Delivery {
	var out []bridge.Delivery
	for _, dl := range ds {
		if dl.Endpoint == endpoint {
			out = append(out, dl)
		}
	}
	return out
}

// sameDelivery compares deliveries, times by instant and data as JSON; want's endpoint is given.
func sameDelivery(got, want bridge.Delivery, endpoint string) bool {
	want.Endpoint = endpoint
	for _, p := range []struct{ g, w *time.Time }{{&got.EventAt, &want.EventAt}, {&got.NextAttemptAt, &want.NextAttemptAt},
		{&got.CreatedAt, &want.CreatedAt}, {&got.UpdatedAt, &want.UpdatedAt}} {
		if !p.g.Equal(*p.w) {
			return false
		}
		*p.g = *p.w
	}
	if !sameJSON(got.Data, want.Data) {
		return false
	}
	got.Data = want.Data
	return reflect.DeepEqual(got, want)
}

func sameDeliveries(got, want []bridge.Delivery) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !sameDelivery(got[i], want[i], want[i].Endpoint) {
			return false
		}
	}
	return true
}

func sameAttempt(got, want bridge.Attempt) bool {
	return got.At.Equal(want.At) && got.Status == want.Status && got.Latency == want.Latency &&
		got.Response == want.Response && got.Error == want.Error
}

func deliveryIDs(ds []bridge.Delivery) string {
	var out []string
	for _, dl := range ds {
		out = append(out, fmt.Sprintf("%d>%s", dl.EventID, dl.Endpoint))
	}
	return "[" + strings.Join(out, " ") + "]"
}
