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

// claimRecord makes b.N due deliveries in s, then claims them batch at a time and records each
// delivered.
func claimRecord(b *testing.B, s bridge.Store, batch int) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	recs := make([]recording, b.N)
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
	events, err := s.PendingEvents(ctx, b.N)
	if err != nil || len(events) != b.N {
		b.Fatalf("PendingEvents = %d, %v; want %d", len(events), err, b.N)
	}
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
