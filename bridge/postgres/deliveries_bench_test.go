package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// BenchmarkClaimRecord is bridge/sqlite's BenchmarkClaimRecord on PostgreSQL (a new database
// per run, from BRIDGE_TEST_POSTGRES_DSN; skipped without it): claim a due delivery and record
// its attempt as delivered, per delivery, one at a time (batch=1) and 32 at a claim (batch=32,
// as the relay claims). Same names as SQLite's, so benchstat compares the two stores:
// go test ./bridge/postgres -run '^$' -bench ClaimRecord -count 10 > pg.txt
func BenchmarkClaimRecord(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			s, err := postgres.Open(context.Background(), pgtest.New(b))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchClaimRecord(b, s, batch)
		})
	}
}

// deliveryStore is what BenchmarkClaimRecord needs of a store (the same helper as
// bridge/sqlite's, which a test file cannot share across packages).
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
