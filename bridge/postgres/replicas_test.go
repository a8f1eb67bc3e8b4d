package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to look at the tables

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// replicas opens n handles on one new database, as n replicas of the bridge have, each with a
// connection pool of its own.
func replicas(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	dsn := pgtest.New(t)
	out := make([]*postgres.Store, n)
	for i := range out {
		out[i] = open(t, dsn)
	}
	return out
}

// atOnce runs fn(0) … fn(n-1) in n goroutines released together, and waits for them.
func atOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// TestReplicasClaimDeliveriesOnce: two replicas, each with several claimers, claim 40 due
// deliveries at once, again and again: every delivery is leased exactly once, and all are.
func TestReplicasClaimDeliveriesOnce(t *testing.T) {
	ctx := context.Background()
	rs := replicas(t, 2)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	const n = 40
	var recs []connectors.Recording
	for i := range n {
		recs = append(recs, connectors.Recording{ItemID: fmt.Sprint("r", i), Version: "1", Name: "r.wav"})
	}
	jobs, err := rs[0].AddRecordings(ctx, "inbox", recs, "", t0)
	if err != nil || len(jobs) != n {
		t.Fatalf("AddRecordings = %d jobs, %v", len(jobs), err)
	}
	for i := range jobs {
		j := &jobs[i]
		j.State = bridge.StateQueued
		if err := rs[i%2].Update(ctx, j, bridge.StateDiscovered, "queued", bridge.NewEvent(bridge.EventUploaded, j, nil)); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := rs[1].PendingEvents(ctx, 1000)
	if err != nil || len(evs) != n {
		t.Fatalf("PendingEvents = %d, %v; want %d", len(evs), err, n)
	}
	for i, e := range evs {
		if err := rs[i%2].FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{"crm"}, t0); err != nil {
			t.Fatal(err)
		}
	}
	claimed := map[string]int{}
	var mu sync.Mutex
	for round := 0; round < 10 && len(claimed) < n; round++ {
		atOnce(8, func(i int) {
			got, err := rs[i%2].Claim(ctx, "crm", t0, time.Hour, 3)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("Claim on replica %d = %v", i%2, err)
			}
			for _, d := range got {
				claimed[d.ID]++
			}
		})
	}
	if len(claimed) != n {
		t.Errorf("the replicas leased %d of %d deliveries, want all", len(claimed), n)
	}
	for id, c := range claimed {
		if c != 1 {
			t.Errorf("delivery %s was leased %d times, want once", id, c)
		}
	}
}

// TestReplicasClaimExportRunOnce: of 16 claimers on two replicas, one takes a new tick, and
// one takes it over once its lease ran out.
func TestReplicasClaimExportRunOnce(t *testing.T) {
	ctx := context.Background()
	rs := replicas(t, 2)
	tick := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	race := func(now time.Time) int {
		var mu sync.Mutex
		wins := 0
		atOnce(16, func(i int) {
			ok, err := rs[i%2].ClaimRun(ctx, "nightly", tick, now, 10*time.Minute)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("ClaimRun on replica %d = %v", i%2, err)
			}
			if ok {
				wins++
			}
		})
		return wins
	}
	if wins := race(tick); wins != 1 {
		t.Errorf("16 claims of a new tick on two replicas: %d won, want 1", wins)
	}
	if wins := race(tick.Add(5 * time.Minute)); wins != 0 {
		t.Errorf("16 claims within the lease: %d won, want 0", wins)
	}
	if wins := race(tick.Add(11 * time.Minute)); wins != 1 {
		t.Errorf("16 claims after the lease ran out: %d won, want 1", wins)
	}
}

// TestReplicasTakeALeaseOnce: of 16 takers on two replicas, one holds a named lease.
func TestReplicasTakeALeaseOnce(t *testing.T) {
	ctx := context.Background()
	rs := replicas(t, 2)
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	holders := map[string]bool{}
	atOnce(16, func(i int) {
		holder := fmt.Sprint("replica-", i)
		ok, err := rs[i%2].Lease(ctx, "source:zoom", holder, now, time.Minute)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("Lease(%s) = %v", holder, err)
		}
		if ok {
			holders[holder] = true
		}
	})
	ls, err := rs[0].Leases(ctx)
	if len(holders) != 1 || err != nil || len(ls) != 1 || !holders[ls[0].Holder] {
		t.Errorf("16 takers of one lease: %v won, the store says %+v (%v); want one, the stored holder", holders, ls, err)
	}
}

// TestConcurrentOpensMigrateOnce: four replicas opening a new database at once all succeed, and
// goose's table records every migration exactly once (the advisory lock let one apply them).
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.New(t)
	errs := make([]error, 4)
	atOnce(4, func(i int) {
		s, err := postgres.Open(context.Background(), dsn)
		if err == nil {
			err = s.Close()
		}
		errs[i] = err
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d of 4 at once = %v", i, err)
		}
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT version_id, COUNT(*) FROM goose_db_version WHERE version_id > 0 GROUP BY version_id ORDER BY version_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var versions []int64
	for rows.Next() {
		var v, n int64
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("migration %d recorded %d times, want once", v, n)
		}
		versions = append(versions, v)
	}
	if want := migrationVersions(t); !slices.Equal(versions, want) {
		t.Errorf("recorded migrations %v, want every embedded one once: %v", versions, want)
	}
}

// TestReplicasAddInOppositeOrders: two replicas that see the same recordings listed in
// opposite orders both succeed (a deadlock between their inserts is run again), and each
// recording is one job, created by one of them.
func TestReplicasAddInOppositeOrders(t *testing.T) {
	ctx := context.Background()
	rs := replicas(t, 2)
	var recs []connectors.Recording
	for i := range 20 {
		recs = append(recs, connectors.Recording{ItemID: fmt.Sprint("item-", i), Version: "1", Name: "a.wav"})
	}
	reversed := slices.Clone(recs)
	slices.Reverse(reversed)
	for round := range 3 {
		source := fmt.Sprint("inbox-", round)
		created := make([][]bridge.Job, 2)
		atOnce(2, func(i int) {
			list := map[int][]connectors.Recording{0: recs, 1: reversed}[i]
			added, err := rs[i].AddRecordings(ctx, source, list, "", time.Now())
			if err != nil {
				t.Errorf("AddRecordings on replica %d = %v", i, err)
			}
			created[i] = added
		})
		if n := len(created[0]) + len(created[1]); n != len(recs) {
			t.Errorf("round %d: the replicas created %d + %d jobs, want %d in all", round, len(created[0]), len(created[1]), len(recs))
		}
		if jobs, _ := rs[0].Jobs(ctx, bridge.JobFilter{Source: source}); len(jobs) != len(recs) {
			t.Errorf("round %d: Jobs(%s) = %d, want %d", round, source, len(jobs), len(recs))
		}
	}
}

// migrationVersions lists the versions of the migrations in migrations/, ascending (numbered in
// ranges: there may be gaps).
func migrationVersions(t *testing.T) []int64 {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v (%v)", files, err)
	}
	var out []int64
	for _, f := range files {
		v, err := strconv.ParseInt(strings.SplitN(filepath.Base(f), "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		out = append(out, v)
	}
	return out
}
