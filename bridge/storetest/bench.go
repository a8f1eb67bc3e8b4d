package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// BenchmarkClaimRecord is a store's half of a delivery, the benchmark every store runs: claim a
// due delivery (a lease) and record its attempt as delivered, per delivery (ns/op is one
// delivery's store cost). batch=1 claims one at a time; batch=32 claims as the relay does and
// records each. The deliveries (one event of its own job each, so per-job order holds none
// back) are made before the timer starts. newStore opens a new, empty store for one run; the
// benchmark closes it. Every store names the sub-benchmarks alike, so benchstat compares them:
// go test ./bridge/sqlite -run '^$' -bench ClaimRecord -count 10 > new.txt
func BenchmarkClaimRecord(b *testing.B, newStore func(b *testing.B) bridge.Store) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			s := newStore(b)
			defer s.Close()
			claimRecord(b, s, batch)
		})
	}
}

// benchEvents makes n jobs in s, one event each, not yet fanned out, and returns the events.
func benchEvents(b *testing.B, s bridge.Store, n int, now time.Time) []bridge.Event {
	ctx := context.Background()
	recs := make([]recording, n)
	for i := range recs {
		recs[i] = recording{ItemID: fmt.Sprint(i), Version: "1", Name: "a.wav"}
	}
	jobs, err := s.AddRecordings(ctx, "inbox", recs, "", now)
	if err != nil {
		b.Fatal(err)
	}
	for i := range jobs {
		j := &jobs[i]
		j.UpdatedAt = now
		if err := s.Update(ctx, j, j.State, "", bridge.NewEvent(bridge.EventUploaded, j, nil)); err != nil {
			b.Fatal(err)
		}
	}
	events, err := s.PendingEvents(ctx, n)
	if err != nil || len(events) != n {
		b.Fatalf("PendingEvents = %d, %v; want %d", len(events), err, n)
	}
	return events
}

// claimRecord makes b.N due deliveries in s, then claims them batch at a time and records each
// delivered.
func claimRecord(b *testing.B, s bridge.Store, batch int) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	events := benchEvents(b, s, b.N, now)
	for _, e := range events {
		if err := s.FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{"crm"}, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		due, err := s.Claim(ctx, "crm", now, time.Minute, min(batch, b.N-done))
		if err != nil || len(due) == 0 {
			b.Fatalf("Claim after %d of %d = %d, %v", done, b.N, len(due), err)
		}
		for i := range due {
			d := &due[i]
			d.Status, d.Attempts, d.LastStatus = bridge.DeliveryDelivered, d.Attempts+1, 200
			if err := s.Record(ctx, d, bridge.Attempt{At: now, Status: 200, Latency: 1}); err != nil {
				b.Fatal(err)
			}
		}
		done += len(due)
	}
}

// BenchmarkGroupCommit is a store's half of a delivery as the relay does it: each transaction
// (Commit) fans out a window of events to 10 endpoints and records the deliveries the one
// before leased, delivered. ns/op is one delivery's store cost: its fan-out, its lease and its
// record, with its share of the commit. The sub-benchmarks lease the new deliveries in two
// ways: leased=fanout as the fan-out writes them (a lane with room), leased=search by the next
// transaction's search (a lane that was full: the new deliveries wait in the store). The
// events are made before the timer starts. newStore opens a new, empty store for one run:
// go test ./bridge/sqlite -run '^$' -bench GroupCommit -count 10 > new.txt
func BenchmarkGroupCommit(b *testing.B, newStore func(b *testing.B) bridge.Store) {
	for _, run := range []struct {
		name   string
		search bool
	}{{"leased=fanout", false}, {"leased=search", true}} {
		b.Run(run.name, func(b *testing.B) {
			s := newStore(b)
			groupCommit(b, s, run.search)
			b.StopTimer()
			s.Close()
		})
	}
}

// groupCommit makes b.N deliveries' events in s, then commits windows of them as
// BenchmarkGroupCommit says, failing b when a claim leases other than the window it should.
func groupCommit(b *testing.B, s bridge.Store, search bool) {
	const window = 32
	endpoints := []string{"crm0", "crm1", "crm2", "crm3", "crm4", "crm5", "crm6", "crm7", "crm8", "crm9"}
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	n := (b.N + len(endpoints) - 1) / len(endpoints)
	events := benchEvents(b, s, n, now)
	b.ReportAllocs()
	b.ResetTimer()
	var leased []bridge.Delivery
	for at := 0; at < n || len(leased) > 0 || (search && at < n+window); at += window {
		batch := bridge.DeliveryBatch{Now: now}
		for i := range leased {
			d := &leased[i]
			d.Status, d.Attempts, d.LastStatus = bridge.DeliveryDelivered, d.Attempts+1, 200
			batch.Records = append(batch.Records, bridge.RecordItem{Delivery: d, Attempt: bridge.Attempt{At: now, Status: 200, Latency: 1}})
		}
		fresh := events[min(at, n):min(at+window, n)]
		for _, e := range fresh {
			batch.FanOuts = append(batch.FanOuts, bridge.FanOutItem{Ref: bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, Endpoints: endpoints})
		}
		// A search finds the window before (the first batch has none to find): it takes the
		// whole limit, so the batch's own deliveries wait for the next one.
		want := fresh
		if search {
			want = events[min(max(at-window, 0), n):min(at, n)]
		}
		if !search || at > 0 {
			for _, ep := range endpoints {
				batch.Claims = append(batch.Claims, bridge.ClaimItem{Endpoint: ep, Limit: window, Lease: time.Minute, FanOutsOnly: !search})
			}
		}
		if err := s.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
		for _, it := range batch.Records {
			if it.Err != nil {
				b.Fatal(it.Err)
			}
		}
		leased = leased[:0]
		for _, c := range batch.Claims {
			leased = append(leased, c.Claimed...)
			if got := len(c.Claimed); got != len(want) || got > 0 && (c.Claimed[0].EventID != want[0].ID || c.Claimed[got-1].EventID != want[len(want)-1].ID) {
				b.Fatalf("Commit of window %d leased %d deliveries of %s (%s), want %d, of window %d's events", at/window, got, c.Endpoint,
					deliveryIDs(c.Claimed), len(want), (at-len(want))/window)
			}
		}
	}
}

// BenchmarkClaimPaused measures what the relay asks at every commit that fans out to a paused
// endpoint: a claim's search of it, holding a backlog of 10,000 pending deliveries (500 with
// -short). It finds nothing, and must not walk the backlog to say so (it did: a backlog
// fanned out to paused endpoints took a commit time growing with it).
func BenchmarkClaimPaused(b *testing.B, newStore func(b *testing.B) bridge.Store) {
	s := newStore(b)
	defer s.Close()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	n := 10000
	if testing.Short() {
		n = 500
	}
	events := benchEvents(b, s, n, now)
	if err := s.DisableEndpoint(ctx, "crm", "paused for the benchmark", now); err != nil {
		b.Fatal(err)
	}
	for at := 0; at < n; at += 200 {
		batch := bridge.DeliveryBatch{Now: now}
		for _, e := range events[at:min(at+200, n)] {
			batch.FanOuts = append(batch.FanOuts, bridge.FanOutItem{Ref: bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, Endpoints: []string{"crm"}})
		}
		if err := s.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		batch := bridge.DeliveryBatch{Now: now, Claims: []bridge.ClaimItem{{Endpoint: "crm", Limit: 128, Lease: time.Minute}}}
		if err := s.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
		if got := len(batch.Claims[0].Claimed); got != 0 {
			b.Fatalf("a claim of a paused endpoint leased %d deliveries, want 0", got)
		}
	}
}
