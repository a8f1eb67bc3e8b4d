package storetest

import (
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// fanOutLeaseCases are DeliveryStore.Commit's lease at fan-out: a claim takes the deliveries
// its batch's own fan-outs create, leased as they are written, where Claim would take them
// (bridge.ClaimItem), then due ones as Claim does.
var fanOutLeaseCases = []testCase{
	{"a fan-out with a claim leases its new deliveries at once", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		got := d.fanOutClaim(t, t0, crmClaim(10), evs[0], evs[1])
		wantEvents(t, "Commit", got, "the two new deliveries, in event order", evs[0].ID, evs[1].ID)
		until := t0.Add(time.Minute)
		for _, dl := range got {
			if dl.Endpoint != "crm" || !dl.LeaseUntil.Equal(until) || dl.WebhookID == "" {
				t.Errorf("Commit: claimed %s>%s leased until %v, webhook-id %q; want crm's until %v, with a webhook-id", dl.ID, dl.Endpoint, dl.LeaseUntil, dl.WebhookID, until)
			}
			if stored := d.find(t, dl.EventID, "crm"); stored.ID != dl.ID || !stored.NextAttemptAt.Equal(until) {
				t.Errorf("Commit: stored delivery %s of event %d due %v, want %s due when its lease ends, %v", stored.ID, dl.EventID, stored.NextAttemptAt, dl.ID, until)
			}
		}
		if again := d.claim(t, d.Stores, "crm", t0.Add(30*time.Second), time.Minute, 10); len(again) != 0 {
			t.Errorf("Claim(crm) within the leases taken at fan-out = %s, want none", deliveryIDs(again))
		}
		after := d.claim(t, d.Stores, "crm", until.Add(time.Second), time.Minute, 10)
		wantEvents(t, "Claim(crm)", after, "both due again once the lease ran out", evs[0].ID, evs[1].ID)
	}},
	{"events of one job fanned out together are leased as a chain, in event order", func(t *testing.T, d *db) {
		evs := d.jobEvents(t, "a", 2)
		// Handed to the batch out of order: the claim keeps the event order anyway.
		got := d.fanOutClaim(t, t0, crmClaim(10), evs[1], evs[0])
		wantEvents(t, "Commit", got, "both events of the job, the first first", evs[0].ID, evs[1].ID)
	}},
	{"a delivery pending at the endpoint holds its job's new one back", func(t *testing.T, d *db) {
		evs := d.jobEvents(t, "a", 2)
		d.fanOut(t, evs[0], t0, "crm")
		first := d.claim(t, d.Stores, "crm", t0, time.Minute, 10)
		wantEvents(t, "Claim(crm)", first, "the first event of the job", evs[0].ID)
		got := d.fanOutClaim(t, t0.Add(time.Second), crmClaim(10), evs[1])
		wantEvents(t, "Commit", got, "none: the job's event before it is pending at crm, under another claim")
		d.record(t, first[0], bridge.DeliveryDelivered, time.Time{}, t0.Add(2*time.Second))
		after := d.claim(t, d.Stores, "crm", t0.Add(3*time.Second), time.Minute, 10)
		if len(after) != 1 || after[0].EventID != evs[1].ID {
			t.Errorf("Claim(crm) once event %d is delivered = %s, want event %d, due since its fan-out", evs[0].ID, deliveryIDs(after), evs[1].ID)
		}
	}},
	{"an earlier event of the job still to fan out holds the new one back", func(t *testing.T, d *db) {
		evs := d.jobEvents(t, "a", 2)
		got := d.fanOutClaim(t, t0, crmClaim(10), evs[1])
		wantEvents(t, "Commit", got, "none: the job's first event is not fanned out yet")
		// The first event, fanned out later, comes before the second, which waits behind it.
		got = d.fanOutClaim(t, t0.Add(time.Second), crmClaim(10), evs[0])
		wantEvents(t, "Commit", got, "the first event alone: the second waits until it is delivered", evs[0].ID)
		d.record(t, got[0], bridge.DeliveryDelivered, time.Time{}, t0.Add(2*time.Second))
		after := d.claim(t, d.Stores, "crm", t0.Add(3*time.Second), time.Minute, 10)
		if len(after) != 1 || after[0].EventID != evs[1].ID {
			t.Errorf("Claim(crm) once event %d is delivered = %s, want event %d", evs[0].ID, deliveryIDs(after), evs[1].ID)
		}
	}},
	{"a paused endpoint gets nothing leased", func(t *testing.T, d *db) {
		e := d.events(t, 1)[0]
		if err := d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0); err != nil {
			t.Fatalf("DisableEndpoint(crm) = %v", err)
		}
		b := &bridge.DeliveryBatch{Now: t0, FanOuts: []bridge.FanOutItem{{Ref: ref(e), Endpoints: []string{"crm", "erp"}}},
			Claims: []bridge.ClaimItem{crmClaim(10), {Endpoint: "erp", Limit: 10, Lease: time.Minute}}}
		d.commit(t, d.Stores, b)
		wantEvents(t, "Commit", b.Claims[0].Claimed, "none: crm is disabled")
		wantEvents(t, "Commit", b.Claims[1].Claimed, "erp's, which is not", e.ID)
		if err := d.EnableEndpoint(ctx, "crm"); err != nil {
			t.Fatalf("EnableEndpoint(crm) = %v", err)
		}
		if got := d.claim(t, d.Stores, "crm", t0.Add(time.Second), time.Minute, 10); len(got) != 1 || got[0].EventID != e.ID {
			t.Errorf("Claim(crm) once enabled again = %s, want event %d, never leased", deliveryIDs(got), e.ID)
		}
	}},
	{"up to the claim's limit, the rest claimable", func(t *testing.T, d *db) {
		evs := d.events(t, 3)
		got := d.fanOutClaim(t, t0, crmClaim(2), evs...)
		wantEvents(t, "Commit", got, "the two oldest: limit 2", evs[0].ID, evs[1].ID)
		rest := d.claim(t, d.Stores, "crm", t0.Add(time.Second), time.Minute, 10)
		if len(rest) != 1 || rest[0].EventID != evs[2].ID {
			t.Errorf("Claim(crm) after a batch leased 2 of 3 = %s, want the third, event %d", deliveryIDs(rest), evs[2].ID)
		}
	}},
	{"FanOutsOnly takes the new deliveries alone", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		d.fanOut(t, evs[0], t0, "crm")
		c := crmClaim(10)
		c.FanOutsOnly = true
		got := d.fanOutClaim(t, t0.Add(time.Second), c, evs[1])
		wantEvents(t, "Commit", got, "the new one alone: FanOutsOnly does not search for the older due one", evs[1].ID)
		old := d.claim(t, d.Stores, "crm", t0.Add(2*time.Second), time.Minute, 10)
		if len(old) != 1 || old[0].EventID != evs[0].ID {
			t.Errorf("Claim(crm) after a FanOutsOnly batch = %s, want the older one, event %d, left due", deliveryIDs(old), evs[0].ID)
		}
	}},
	{"an event fanned out again leases nothing", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		done := d.fanOut(t, evs[0], t0, "crm")[0]
		claimed := d.claim(t, d.Stores, "crm", t0, time.Minute, 10)
		wantEvents(t, "Claim(crm)", claimed, "the first event's", evs[0].ID)
		d.record(t, claimed[0], bridge.DeliveryDelivered, time.Time{}, t0.Add(time.Second))
		due := d.fanOut(t, evs[1], t0, "crm")[0]
		// Both messages are handed out again: one delivered, one pending and due.
		c := crmClaim(10)
		c.FanOutsOnly = true
		got := d.fanOutClaim(t, t0.Add(time.Minute), c, evs[0], evs[1])
		wantEvents(t, "Commit", got, "none: both deliveries existed before the batch")
		for _, was := range []struct {
			dl     bridge.Delivery
			status bridge.DeliveryStatus
		}{{done, bridge.DeliveryDelivered}, {due, bridge.DeliveryPending}} {
			now := d.find(t, was.dl.EventID, "crm")
			if now.ID != was.dl.ID || now.WebhookID != was.dl.WebhookID || now.Status != was.status || now.LeaseUntil.After(t0.Add(time.Minute)) {
				t.Errorf("Commit: delivery of event %d fanned out again = %s, %s, webhook-id %q, leased until %v; want %s as it was: %s, %q, not leased",
					was.dl.EventID, now.ID, now.Status, now.WebhookID, now.LeaseUntil, was.dl.ID, was.status, was.dl.WebhookID)
			}
		}
		if n := len(d.deliveries(t, bridge.DeliveryFilter{Endpoint: "crm"})); n != 2 {
			t.Errorf("Deliveries(crm) after fanning out again = %d, want 2", n)
		}
		if got := d.claim(t, d.Stores, "crm", t0.Add(time.Minute), time.Minute, 10); len(got) != 1 || got[0].ID != due.ID {
			t.Errorf("Claim(crm) after the repeated fan-out = %s, want event %d's delivery, still due", deliveryIDs(got), evs[1].ID)
		}
	}},
	{"a release of a delivery leased at fan-out makes it due at once", func(t *testing.T, d *db) {
		e := d.events(t, 1)[0]
		got := d.fanOutClaim(t, t0, crmClaim(10), e)
		wantEvents(t, "Commit", got, "the new delivery", e.ID)
		now := t0.Add(time.Second)
		d.commit(t, d.Stores, &bridge.DeliveryBatch{Now: now, Releases: got})
		again := d.claim(t, d.Stores, "crm", now, time.Minute, 10)
		if len(again) != 1 || again[0].ID != got[0].ID {
			t.Errorf("Claim(crm) at %v after the release = %s, want %s at once, not when its lease would have ended (%v)", now, deliveryIDs(again), got[0].ID, got[0].LeaseUntil)
		}
	}},
	{"more fan-outs than one statement writes: every lease returned", manyFanOutLeases},
}

// manyFanOutLeases fans out more events in one batch than one statement writes (SQLite: 200)
// with a claim room for all: each is in Claimed, none leased without being handed out.
func manyFanOutLeases(t *testing.T, d *db) {
	const n = 250
	evs := d.events(t, n)
	if len(evs) != n {
		t.Fatalf("events(%d) = %d events", n, len(evs))
	}
	got := d.fanOutClaim(t, t0, crmClaim(300), evs...)
	seen := map[int64]int{}
	for _, dl := range got {
		seen[dl.EventID]++
		if dl.Endpoint != "crm" || !dl.LeaseUntil.Equal(t0.Add(time.Minute)) {
			t.Errorf("Commit: claimed %s>%s leased until %v, want crm's until %v", dl.ID, dl.Endpoint, dl.LeaseUntil, t0.Add(time.Minute))
		}
	}
	var missing []int64
	for _, e := range evs {
		if seen[e.ID] != 1 {
			missing = append(missing, e.ID)
		}
	}
	if len(got) != n || len(missing) != 0 {
		t.Errorf("Commit: claimed %d deliveries, want %d (each of the %d events once); events missing or repeated: %v", len(got), n, n, missing)
	}
	if again := d.claim(t, d.Stores, "crm", t0.Add(time.Second), time.Minute, 300); len(again) != 0 {
		t.Errorf("Claim(crm) right after the batch = %d deliveries, want none: the batch leased all %d", len(again), n)
	}
	if all := d.deliveries(t, bridge.DeliveryFilter{Endpoint: "crm"}); len(all) != n {
		t.Errorf("Deliveries(crm) after the batch = %d, want %d", len(all), n)
	}
}

// crmClaim is a claim of crm's deliveries, up to limit, leased for a minute.
func crmClaim(limit int) bridge.ClaimItem {
	return bridge.ClaimItem{Endpoint: "crm", Limit: limit, Lease: time.Minute}
}

// fanOutClaim commits one batch at now that fans evs out to crm, with claim c, and returns what
// c claimed; it fails the test on an error, the batch's or a fan-out's.
func (d *db) fanOutClaim(t *testing.T, now time.Time, c bridge.ClaimItem, evs ...bridge.Event) []bridge.Delivery {
	t.Helper()
	b := &bridge.DeliveryBatch{Now: now, Claims: []bridge.ClaimItem{c}}
	for _, e := range evs {
		b.FanOuts = append(b.FanOuts, bridge.FanOutItem{Ref: ref(e), Endpoints: []string{"crm"}})
	}
	d.commit(t, d.Stores, b)
	for i, f := range b.FanOuts {
		if f.Err != nil {
			t.Fatalf("Commit: FanOuts[%d] (event %d) Err = %v, want nil", i, f.Ref.EventID, f.Err)
		}
	}
	return b.Claims[0].Claimed
}

// wantEvents fails the test unless got, what call claimed, are the deliveries of events, in
// that order.
func wantEvents(t *testing.T, call string, got []bridge.Delivery, why string, events ...int64) {
	t.Helper()
	ok := len(got) == len(events)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].EventID == events[i]
	}
	if !ok {
		t.Fatalf("%s: claimed %v, want %v (%s)", call, deliveryIDs(got), events, why)
	}
}
