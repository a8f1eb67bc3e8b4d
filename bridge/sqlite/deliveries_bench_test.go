package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

// BenchmarkClaimRecord is the store's half of a delivery: claim a due delivery (a lease) and
// record its attempt as delivered, per delivery (ns/op is one delivery's store cost). batch=1
// claims one at a time; batch=32 claims as the relay does (8 rounds of 4 per endpoint) and
// records each. The deliveries (one event of its own job each, so per-job order holds none
// back) are made before the timer starts. Compare runs with benchstat:
// go test ./bridge/sqlite -run '^$' -bench ClaimRecord -count 10 > new.txt
func BenchmarkClaimRecord(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			ctx := context.Background()
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bridge.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchClaimRecord(b, s, batch)
		})
	}
}

// deliveryStore is what BenchmarkClaimRecord needs of a store.
type deliveryStore interface {
	bridge.DeliveryStore
	AddRecordings(ctx context.Context, source string, recs []connectors.Recording, cursor string, now time.Time) ([]bridge.Job, error)
	Update(ctx context.Context, j *bridge.Job, from bridge.State, reason string, events ...bridge.Event) error
	PendingEvents(ctx context.Context, limit int) ([]bridge.Event, error)
}

// benchClaimRecord makes b.N due deliveries in s, then claims them batch at a time and
// records each delivered.
func benchClaimRecord(b *testing.B, s deliveryStore, batch int) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	recs := make([]connectors.Recording, b.N)
	for i := range recs {
		recs[i] = connectors.Recording{ItemID: fmt.Sprint(i), Version: "1", Name: "a.wav"}
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
