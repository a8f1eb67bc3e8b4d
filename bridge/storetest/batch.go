package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// commitCases are DeliveryStore.Commit's: the relay's group commit of records, fan-outs and
// claims in one transaction, in that order, each item with its own outcome.
var commitCases = append([]testCase{
	{"a release gives a claim back at once, unless claimed again since", func(t *testing.T, d *db) {
		e := d.jobEvents(t, "a", 1)[0]
		d.fanOut(t, e, t0, "crm")
		first := d.claim(t, d.Stores, "crm", t0, time.Minute, 10)
		if len(first) != 1 {
			t.Fatalf("Claim(crm) = %s, want the one delivery", deliveryIDs(first))
		}
		d.commit(t, d.Stores, &bridge.DeliveryBatch{Now: t0, Releases: first})
		again := d.claim(t, d.Stores, "crm", t0.Add(time.Second), time.Minute, 10)
		if len(again) != 1 || again[0].ID != first[0].ID {
			t.Fatalf("Claim(crm) after the release = %s, want %s back at once", deliveryIDs(again), first[0].ID)
		}
		// The first copy is stale now: giving it back leaves the second claim alone.
		d.commit(t, d.Stores, &bridge.DeliveryBatch{Now: t0, Releases: first})
		if got := d.claim(t, d.Stores, "crm", t0.Add(2*time.Second), time.Minute, 10); len(got) != 0 {
			t.Errorf("Claim(crm) after a stale release = %s, want none: the second claim still holds it", deliveryIDs(got))
		}
	}},
	{"records, fan-outs and claims, in that order", func(t *testing.T, d *db) {
		a := d.jobEvents(t, "a", 2)
		b := d.jobEvents(t, "b", 1)[0]
		for _, e := range append(a, b) {
			d.fanOut(t, e, t0, "crm")
		}
		claimed := d.claim(t, d.Stores, "crm", t0, time.Minute, 10)
		if len(claimed) != 2 || claimed[0].EventID != a[0].ID || claimed[1].EventID != b.ID {
			t.Fatalf("Claim(crm) = %s, want job a's first event (%d) and job b's (%d)", deliveryIDs(claimed), a[0].ID, b.ID)
		}
		c := d.jobEvents(t, "c", 1)[0]
		now := t0.Add(time.Minute)
		delivered, retry := claimed[0], claimed[1]
		delivered.Status, delivered.Attempts, delivered.NextAttemptAt = bridge.DeliveryDelivered, 1, time.Time{}
		retry.Status, retry.Attempts, retry.NextAttemptAt = bridge.DeliveryPending, 1, t0.Add(time.Hour)
		attempts := []bridge.Attempt{
			{At: now, Status: 200, Latency: 4},
			{At: now, Status: 503, Latency: 9, Response: "busy", Error: "503 Service Unavailable"},
		}
		batch := &bridge.DeliveryBatch{Now: now,
			Records: []bridge.RecordItem{{Delivery: &delivered, Attempt: attempts[0]}, {Delivery: &retry, Attempt: attempts[1]}},
			FanOuts: []bridge.FanOutItem{{Ref: ref(c), Endpoints: []string{"crm", "erp"}}},
			Claims:  []bridge.ClaimItem{{Endpoint: "crm", Limit: 10, Lease: time.Minute}},
		}
		d.commit(t, d.Stores, batch)
		for i, r := range batch.Records {
			if r.Err != nil {
				t.Errorf("Commit: Records[%d].Err = %v, want nil", i, r.Err)
			}
		}
		if batch.FanOuts[0].Err != nil {
			t.Errorf("Commit: FanOuts[0].Err = %v, want nil", batch.FanOuts[0].Err)
		}
		for i, tc := range []struct {
			dl     bridge.Delivery
			status bridge.DeliveryStatus
			next   time.Time
		}{{delivered, bridge.DeliveryDelivered, time.Time{}}, {retry, bridge.DeliveryPending, t0.Add(time.Hour)}} {
			got, history, err := d.Delivery(ctx, tc.dl.ID)
			if err != nil {
				t.Fatalf("Commit: Delivery(%s) = %v; want %s after 1 attempt, due %v, last %d at %v", tc.dl.ID, err, tc.status, tc.next, attempts[i].Status, now)
			}
			if got.Status != tc.status || got.Attempts != 1 || !got.NextAttemptAt.Equal(tc.next) || got.LastStatus != attempts[i].Status ||
				got.LastError != attempts[i].Error || !got.UpdatedAt.Equal(now) {
				t.Errorf("Commit: Delivery(%s) = %s after %d attempts, due %v, last %d (%q) at %v; want %s after 1 attempt, due %v, last %d at %v",
					tc.dl.ID, got.Status, got.Attempts, got.NextAttemptAt, got.LastStatus, got.LastError, got.UpdatedAt, tc.status, tc.next, attempts[i].Status, now)
			}
			if len(history) != 1 || !sameAttempt(history[0], attempts[i]) {
				t.Errorf("Commit: Delivery(%s) attempts = %+v, want %+v", tc.dl.ID, history, attempts[i])
			}
		}
		fanned := d.deliveries(t, bridge.DeliveryFilter{})
		var ofC []bridge.Delivery
		for _, dl := range fanned {
			if dl.EventID == c.ID {
				ofC = append(ofC, dl)
			}
		}
		if len(ofC) != 2 || ofC[0].Endpoint != "crm" || ofC[1].Endpoint != "erp" || !ofC[0].CreatedAt.Equal(now) || ofC[0].WebhookID == "" {
			t.Errorf("Commit: deliveries of the event fanned out = %s, want crm and erp, created %v", deliveryIDs(ofC), now)
		}
		// a's second event was waiting behind its first, recorded delivered in the same batch:
		// the claim's search finds it; c's delivery, fanned out by the batch, is leased as it
		// is written, in the room left.
		want := []int64{a[1].ID, c.ID}
		got := batch.Claims[0].Claimed
		if len(got) != len(want) || got[0].EventID != want[0] || got[1].EventID != want[1] {
			t.Fatalf("Commit: claimed %v, want %v (job a's second event, then the new one)", deliveryIDs(got), want)
		}
		for _, dl := range got {
			if dl.Endpoint != "crm" || !dl.LeaseUntil.Equal(now.Add(time.Minute)) {
				t.Errorf("Commit: claimed %s>%s leased until %v, want crm's until %v", dl.ID, dl.Endpoint, dl.LeaseUntil, now.Add(time.Minute))
			}
		}
		if again := d.claim(t, d.Stores, "crm", now.Add(30*time.Second), time.Minute, 10); len(again) != 0 {
			t.Errorf("Claim(crm) within the leases the batch took = %s, want none", deliveryIDs(again))
		}
	}},
	{"a record's outcome is its own", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		for _, e := range evs {
			d.fanOut(t, e, t0, "crm")
		}
		// A relay claims the first delivery and is paused past its lease; another claims it
		// again, and claims the second.
		late := d.claim(t, d.Stores, "crm", t0, time.Minute, 1)[0]
		other := d.another()
		taker := d.claim(t, other, "crm", t0.Add(2*time.Minute), time.Minute, 1)[0]
		ok := d.claim(t, other, "crm", t0.Add(2*time.Minute), time.Minute, 1)[0]
		if taker.ID != late.ID || ok.EventID != evs[1].ID {
			t.Fatalf("Claim(crm) after the lease = %s then %s, want %s again then event %d", taker.ID, deliveryIDs([]bridge.Delivery{ok}), late.ID, evs[1].ID)
		}
		now := t0.Add(3 * time.Minute)
		late.Status, late.Attempts, late.NextAttemptAt = bridge.DeliveryPending, 1, t0.Add(time.Hour)
		ok.Status, ok.Attempts = bridge.DeliveryDelivered, 1
		missing := bridge.Delivery{ID: "missing", Status: bridge.DeliveryDelivered, Attempts: 1}
		fresh := d.jobEvents(t, "f", 1)[0]
		items := []struct {
			name string
			dl   *bridge.Delivery
			want error
		}{
			{"the late claimer's", &late, bridge.ErrConflict},
			{"an unknown delivery's", &missing, bridge.ErrDeliveryNotFound},
			{"a claimer's still leasing", &ok, nil},
		}
		batch := &bridge.DeliveryBatch{Now: now, FanOuts: []bridge.FanOutItem{{Ref: ref(fresh), Endpoints: []string{"crm"}}}}
		for _, it := range items {
			batch.Records = append(batch.Records, bridge.RecordItem{Delivery: it.dl, Attempt: bridge.Attempt{At: now, Status: 503}})
		}
		batch.Records[2].Attempt.Status = 200
		d.commit(t, d.Stores, batch)
		for i, it := range items {
			if got := batch.Records[i].Err; it.want == nil && got != nil || it.want != nil && !errors.Is(got, it.want) {
				t.Errorf("Commit: %s record Err = %v, want %v", it.name, got, it.want)
			}
		}
		if got, history, _ := d.Delivery(ctx, late.ID); got.Status != bridge.DeliveryPending || got.Attempts != 0 || len(history) != 1 ||
			!got.NextAttemptAt.Equal(t0) {
			t.Errorf("Commit: Delivery(%s) taken over = %+v, %d attempts; want its state left to the newer claim (pending, due %v), the attempt kept", late.ID, got, len(history), t0)
		}
		if got, history, _ := d.Delivery(ctx, ok.ID); got.Status != bridge.DeliveryDelivered || got.LastStatus != 200 || len(history) != 1 {
			t.Errorf("Commit: Delivery(%s) = %+v, %d attempts; want delivered, last 200, its attempt", ok.ID, got, len(history))
		}
		if got, history, err := d.Delivery(ctx, "missing"); !errors.Is(err, bridge.ErrDeliveryNotFound) || got != nil || len(history) != 0 {
			t.Errorf("Commit: Delivery(missing) = %+v, %+v, %v; want ErrDeliveryNotFound and nothing", got, history, err)
		}
		if batch.FanOuts[0].Err != nil || len(d.deliveries(t, bridge.DeliveryFilter{Endpoint: "crm"})) != 3 {
			t.Errorf("Commit: fan-out with conflicting records = %v, deliveries %s; want nil and the new one written",
				batch.FanOuts[0].Err, deliveryIDs(d.deliveries(t, bridge.DeliveryFilter{})))
		}
		// The taker's lease still holds: its record goes through.
		taker.Status, taker.Attempts = bridge.DeliveryDelivered, 1
		if err := other.Record(ctx, &taker, bridge.Attempt{At: now, Status: 200}); err != nil {
			t.Errorf("Record(the taker's) after the batch = %v, want nil", err)
		}
	}},
	{"a batch recording a delivery twice records each in turn", func(t *testing.T, d *db) {
		d.fanOut(t, d.events(t, 1)[0], t0, "crm")
		dl := d.claim(t, d.Stores, "crm", t0, time.Minute, 1)[0]
		failed, delivered := dl, dl
		failed.Status, failed.Attempts, failed.NextAttemptAt = bridge.DeliveryPending, 1, t0.Add(time.Hour)
		delivered.LeaseUntil = time.Time{} // unfenced: the first record ended the lease
		delivered.Status, delivered.Attempts = bridge.DeliveryDelivered, 2
		batch := &bridge.DeliveryBatch{Now: t0, Records: []bridge.RecordItem{
			{Delivery: &failed, Attempt: bridge.Attempt{At: t0, Status: 503}},
			{Delivery: &delivered, Attempt: bridge.Attempt{At: t0.Add(time.Second), Status: 200}},
		}}
		d.commit(t, d.Stores, batch)
		for i, it := range batch.Records {
			if it.Err != nil {
				t.Errorf("Commit: record %d Err = %v, want nil", i, it.Err)
			}
		}
		got, history, err := d.Delivery(ctx, dl.ID)
		if err != nil || got.Status != bridge.DeliveryDelivered || got.Attempts != 2 || got.LastStatus != 200 ||
			len(history) != 2 || history[0].Status != 503 || history[1].Status != 200 {
			t.Errorf("Commit: Delivery(%s) = %+v, %+v, %v; want delivered after 2 attempts, 503 then 200", dl.ID, got, history, err)
		}
	}},
	{"an unknown event's fan-out is its own", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		unknown := bridge.EventRef{EventID: 9999, Type: bridge.EventHeld, JobID: "j"}
		items := []struct {
			ref       bridge.EventRef
			endpoints []string
			want      error
		}{
			{ref(evs[0]), []string{"crm"}, nil},
			{unknown, []string{"crm"}, bridge.ErrUnknownEvent},
			{ref(evs[1]), []string{"crm", "erp"}, nil},
		}
		batch := &bridge.DeliveryBatch{Now: t0, Claims: []bridge.ClaimItem{{Endpoint: "crm", Limit: 10, Lease: time.Minute}}}
		for _, it := range items {
			batch.FanOuts = append(batch.FanOuts, bridge.FanOutItem{Ref: it.ref, Endpoints: it.endpoints})
		}
		d.commit(t, d.Stores, batch)
		for i, it := range items {
			if got := batch.FanOuts[i].Err; it.want == nil && got != nil || it.want != nil && !errors.Is(got, it.want) {
				t.Errorf("Commit: fan-out of event %d Err = %v, want %v", it.ref.EventID, got, it.want)
			}
		}
		want := deliveryIDs([]bridge.Delivery{{EventID: evs[0].ID, Endpoint: "crm"}, {EventID: evs[1].ID, Endpoint: "crm"}, {EventID: evs[1].ID, Endpoint: "erp"}})
		if got := deliveryIDs(d.deliveries(t, bridge.DeliveryFilter{})); got != want {
			t.Errorf("Commit: deliveries = %s, want %s (none of the unknown event)", got, want)
		}
		want = deliveryIDs([]bridge.Delivery{{EventID: evs[0].ID, Endpoint: "crm"}, {EventID: evs[1].ID, Endpoint: "crm"}})
		if got := deliveryIDs(batch.Claims[0].Claimed); got != want {
			t.Errorf("Commit: claimed %v, want %v", got, want)
		}
		if evs := d.pending(t); len(evs) != 0 {
			t.Errorf("PendingEvents() after the batch = %+v, want none: both known events were fanned out", evs)
		}
	}},
}, append(outboxOrderCases(), concurrent("concurrent batches claim each delivery once", func(t *testing.T, d *db, hs []Stores) {
	evs := d.events(t, 5)
	for _, e := range evs {
		d.fanOut(t, e, t0, "crm")
	}
	claimed := map[string]int{}
	var mu sync.Mutex
	together(4, func(i int) {
		b := &bridge.DeliveryBatch{Now: t0, Claims: []bridge.ClaimItem{{Endpoint: "crm", Limit: 2, Lease: time.Minute}}}
		err := hs[i%len(hs)].Commit(ctx, b)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("Commit(claim crm) %d = %v", i, err)
		}
		for _, dl := range b.Claims[0].Claimed {
			claimed[dl.ID]++
		}
	})
	if len(claimed) != 5 {
		t.Errorf("4 concurrent Commit(claim crm, limit 2) of 5 deliveries leased %d of them, want all 5", len(claimed))
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %s was leased by %d batches at once, want 1", id, n)
		}
	}
})...)...)

// outboxOrderCases: with events e1, e2 of one job, e2 fanned out first (by FanOut or by Commit)
// is not claimed until e1 is fanned out and recorded: batched fan-outs may commit out of event
// order, and the order per job holds anyway.
func outboxOrderCases() []testCase {
	var out []testCase
	for _, way := range []struct {
		name   string
		fanOut func(t *testing.T, d *db, e bridge.Event, now time.Time) []bridge.Delivery // the claims of the same batch, if any
	}{
		{"FanOut", func(t *testing.T, d *db, e bridge.Event, now time.Time) []bridge.Delivery {
			d.fanOut(t, e, now, "crm")
			return nil
		}},
		{"Commit", func(t *testing.T, d *db, e bridge.Event, now time.Time) []bridge.Delivery {
			b := &bridge.DeliveryBatch{Now: now, FanOuts: []bridge.FanOutItem{{Ref: ref(e), Endpoints: []string{"crm"}}},
				Claims: []bridge.ClaimItem{{Endpoint: "crm", Limit: 10, Lease: time.Minute}}}
			d.commit(t, d.Stores, b)
			if b.FanOuts[0].Err != nil {
				t.Fatalf("Commit: fan-out of event %d Err = %v, want nil", e.ID, b.FanOuts[0].Err)
			}
			return b.Claims[0].Claimed
		}},
	} {
		out = append(out, testCase{"a later event fanned out first waits, by " + way.name, func(t *testing.T, d *db) {
			evs := d.jobEvents(t, "a", 2)
			e1, e2 := evs[0], evs[1]
			if got := way.fanOut(t, d, e2, t0); len(got) != 0 {
				t.Errorf("Commit: claimed %v, want none: event %d of the job is not fanned out yet", deliveryIDs(got), e1.ID)
			}
			for _, endpoint := range []string{"crm", ""} {
				if got := d.claim(t, d.Stores, endpoint, t0.Add(time.Second), time.Minute, 10); len(got) != 0 {
					t.Fatalf("Claim(%q) with event %d fanned out and %d not = %s, want none", endpoint, e2.ID, e1.ID, deliveryIDs(got))
				}
			}
			d.fanOut(t, e1, t0.Add(2*time.Second), "crm")
			first := d.claim(t, d.Stores, "crm", t0.Add(3*time.Second), time.Minute, 10)
			if len(first) != 1 || first[0].EventID != e1.ID {
				t.Fatalf("Claim(crm) once event %d is fanned out = %s, want it alone, before %d", e1.ID, deliveryIDs(first), e2.ID)
			}
			d.record(t, first[0], bridge.DeliveryDelivered, time.Time{}, t0.Add(4*time.Second))
			if got := d.claim(t, d.Stores, "crm", t0.Add(5*time.Second), time.Minute, 10); len(got) != 1 || got[0].EventID != e2.ID {
				t.Errorf("Claim(crm) once event %d is delivered = %s, want %d", e1.ID, deliveryIDs(got), e2.ID)
			}
		}})
	}
	return out
}

// commit runs b on handle s, failing the test on an error.
func (d *db) commit(t *testing.T, s Stores, b *bridge.DeliveryBatch) {
	t.Helper()
	if err := s.Commit(ctx, b); err != nil {
		t.Fatalf("Commit(%d records, %d events, %d claims) = %v", len(b.Records), len(b.FanOuts), len(b.Claims), err)
	}
}
