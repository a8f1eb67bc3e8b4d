package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// BenchmarkPurge measures the retention purge of delivered deliveries (each with one attempt):
// b.N of them, a week old, removed by Purge in transactions of 500 (batch=500, what bridge run
// does) beside the bare reference of one transaction for them all (batch=all). ns/op is one
// delivery's removal, its attempt included; the deliveries are made before the timer starts.
// newStore opens a new, empty store for one run:
// go test ./bridge/sqlite -run '^$' -bench Purge -count 10 > new.txt
func BenchmarkPurge(b *testing.B, newStore func(b *testing.B) bridge.Store) {
	for _, batch := range []int{500, 0} {
		name := fmt.Sprint("batch=", batch)
		if batch == 0 {
			name = "batch=all"
		}
		b.Run(name, func(b *testing.B) {
			s := newStore(b)
			defer s.Close()
			now := time.Now().UTC().Truncate(time.Millisecond)
			delivered(b, s, b.N, now.Add(-7*24*time.Hour))
			limit := batch
			if limit == 0 {
				limit = b.N
			}
			b.ReportAllocs()
			b.ResetTimer()
			removed := 0
			for {
				n, err := s.Purge(context.Background(), bridge.RetainDeliveries, now.Add(-24*time.Hour), limit)
				if err != nil {
					b.Fatal(err)
				}
				if removed += n; n == 0 {
					break
				}
			}
			b.StopTimer()
			if removed != b.N {
				b.Fatalf("Purge removed %d deliveries, want %d", removed, b.N)
			}
		})
	}
}

// delivered makes n deliveries to crm in s, each delivered at at after one attempt.
func delivered(b *testing.B, s bridge.Store, n int, at time.Time) {
	ctx := context.Background()
	events := benchEvents(b, s, n, at)
	const window = 200
	for i := 0; i < n; i += window {
		batch := bridge.DeliveryBatch{Now: at, Claims: []bridge.ClaimItem{{Endpoint: "crm", Limit: window, Lease: time.Minute, FanOutsOnly: true}}}
		for _, e := range events[i:min(i+window, n)] {
			batch.FanOuts = append(batch.FanOuts, bridge.FanOutItem{Ref: bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, Endpoints: []string{"crm"}})
		}
		if err := s.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
		record := bridge.DeliveryBatch{Now: at}
		for _, d := range batch.Claims[0].Claimed {
			d.Status, d.Attempts, d.LastStatus = bridge.DeliveryDelivered, 1, 200
			record.Records = append(record.Records, bridge.RecordItem{Delivery: &d, Attempt: bridge.Attempt{At: at, Status: 200, Latency: 1, Response: "ok"}})
		}
		if err := s.Commit(ctx, &record); err != nil {
			b.Fatal(err)
		}
		for _, it := range record.Records {
			if it.Err != nil {
				b.Fatal(it.Err)
			}
		}
	}
}
