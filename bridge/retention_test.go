package bridge_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

type purgedCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *purgedCounts) Purged(kind string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n[kind] += n
}

// TestPurgerUnderLease: the purge runs on the replica holding the lease "retention" only, in
// batches, leaves nothing past its age (kinds with an age of 0 are kept), counts what it removed
// by kind, and says beforehand what it would remove.
func TestPurgerUnderLease(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for i, age := range []time.Duration{400 * day, 100 * day, 40 * day, 40 * day, 40 * day, 1 * day} {
		at := now.Add(-age)
		added, err := store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "f" + string(rune('a'+i)), Version: "1", Name: "f.wav"}}, "", at)
		if err != nil {
			t.Fatal(err)
		}
		j := added[0]
		j.State, j.UpdatedAt = bridge.StateDone, at
		if err := store.Update(ctx, &j, bridge.StateDiscovered, "done", bridge.NewEvent(bridge.EventCompleted, &j, nil)); err != nil {
			t.Fatal(err)
		}
		evs, _ := store.PendingEvents(ctx, 100)
		for _, e := range evs {
			if e.JobID != j.ID {
				continue
			}
			if err := store.FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{"crm"}, at); err != nil {
				t.Fatal(err)
			}
			ds, _ := store.Deliveries(ctx, bridge.DeliveryFilter{})
			for _, d := range ds {
				if d.EventID == e.ID {
					d.Status, d.Attempts = bridge.DeliveryDelivered, 1
					if err := store.Record(ctx, &d, bridge.Attempt{At: at, Status: 200, Response: "ok"}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	m := &purgedCounts{n: map[string]int{}}
	ages := map[string]time.Duration{bridge.RetainDeliveries: 30 * day, bridge.RetainJobs: 365 * day} // dead letters: forever
	p := &bridge.Purger{Store: store, Ages: ages, Batch: 2, Replica: "a", Lease: time.Minute, Metrics: m, Now: func() time.Time { return now }}
	next, err := p.Show(ctx, "forever")
	want := map[string]int{bridge.RetainDeliveries: 5, bridge.RetainDeadLetters: 0, bridge.RetainJobs: 1, bridge.RetainExports: 0}
	for _, n := range next {
		if n.Count != want[n.Kind] {
			t.Errorf("Show: %s past %s = %d, want %d (%v)", n.Kind, n.Keep, n.Count, want[n.Kind], err)
		}
	}
	if ok, err := store.Lease(ctx, "retention", "b", now, time.Minute); !ok || err != nil {
		t.Fatalf("Lease(retention, b) = %v, %v", ok, err)
	}
	if got, err := p.Purge(ctx); err != nil || len(m.n) != 0 || got[bridge.RetainDeliveries] != 0 {
		t.Errorf("Purge while replica b holds the lease = %v, %v (counted %v); want nothing", got, err, m.n)
	}
	store.Release(ctx, "retention", "b")
	got, err := p.Purge(ctx)
	// The 400-day job's delivery goes with the deliveries (past 30 days), then the job itself.
	if err != nil || got[bridge.RetainDeliveries] != 5 || got[bridge.RetainJobs] != 1 || got[bridge.RetainDeadLetters] != 0 {
		t.Errorf("Purge = %v, %v; want 5 deliveries, 1 job", got, err)
	}
	if m.n[bridge.RetainDeliveries] != 5 || m.n[bridge.RetainJobs] != 1 {
		t.Errorf("bridge_purged_total = %v; want deliveries 5, jobs 1", m.n)
	}
	for kind, age := range ages {
		if n, _, err := store.Expired(ctx, kind, now.Add(-age)); err != nil || n != 0 {
			t.Errorf("Expired(%s) after the purge = %d, %v; want 0", kind, n, err)
		}
	}
	if jobs, _ := store.Jobs(ctx, bridge.JobFilter{}); len(jobs) != 5 {
		t.Errorf("%d jobs after the purge, want the 5 younger than a year", len(jobs))
	}
	ls, _ := store.Leases(ctx)
	for _, l := range ls {
		if l.Name == "retention" && l.Until.After(now) {
			t.Errorf("lease after the purge = %+v; want retention given up", l)
		}
	}
}
