package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// lease takes name for holder at now for ttl, failing the test on an error.
func (d *db) lease(t *testing.T, s Stores, name, holder string, now time.Time, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.Lease(ctx, name, holder, now, ttl)
	if err != nil {
		t.Fatalf("Lease(%s, %s, %v, %v) = %v", name, holder, now, ttl, err)
	}
	return ok
}

var leaseCases = append([]testCase{
	{"a free lease is taken, and renewed by its holder", func(t *testing.T, d *db) {
		if !d.lease(t, d.Stores, "tracker", "r1", t0, time.Minute) {
			t.Fatal("Lease(tracker, r1) of a free lease = false, want true")
		}
		if !d.lease(t, d.Stores, "tracker", "r1", t0.Add(30*time.Second), time.Minute) {
			t.Error("Lease(tracker, r1) renewed by its holder = false, want true")
		}
		ls, _ := d.Leases(ctx)
		if len(ls) != 1 || ls[0].Holder != "r1" || !ls[0].Until.Equal(t0.Add(90*time.Second)) {
			t.Errorf("Leases() = %+v, want tracker held by r1 until %v", ls, t0.Add(90*time.Second))
		}
	}},
	{"a running lease is refused to another holder, then taken once it ran out", func(t *testing.T, d *db) {
		d.lease(t, d.Stores, "source:zoom", "r1", t0, time.Minute)
		if d.lease(t, d.another(), "source:zoom", "r2", t0.Add(59*time.Second), time.Minute) {
			t.Error("Lease(source:zoom, r2) while r1 holds it = true, want false")
		}
		if !d.lease(t, d.Stores, "source:zoom", "r2", t0.Add(time.Minute), time.Minute) {
			t.Error("Lease(source:zoom, r2) once r1's ran out = false, want true")
		}
		if d.lease(t, d.Stores, "source:zoom", "r1", t0.Add(61*time.Second), time.Minute) {
			t.Error("Lease(source:zoom, r1) back late while r2 holds it = true, want false")
		}
	}},
	{"leases are independent by name", func(t *testing.T, d *db) {
		d.lease(t, d.Stores, "source:a", "r1", t0, time.Minute)
		if !d.lease(t, d.Stores, "source:b", "r2", t0, time.Minute) {
			t.Error("Lease(source:b, r2) while r1 holds source:a = false, want true")
		}
	}},
}, concurrent("concurrent takers of a free lease have one winner", func(t *testing.T, d *db, hs []Stores) {
	var mu sync.Mutex
	var winners []string
	together(8, func(i int) {
		holder := string(rune('a' + i))
		ok, err := hs[i%len(hs)].Lease(ctx, "tracker", holder, t0, time.Minute)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("Lease(tracker, %s) = %v", holder, err)
		}
		if ok {
			winners = append(winners, holder)
		}
	})
	if len(winners) != 1 {
		t.Errorf("8 concurrent Lease(tracker): winners %v, want exactly 1", winners)
	}
})...)

var releaseCases = []testCase{
	{"the holder's release frees the lease at once", func(t *testing.T, d *db) {
		d.lease(t, d.Stores, "tracker", "r1", t0, time.Hour)
		if err := d.Release(ctx, "tracker", "r1"); err != nil {
			t.Fatalf("Release(tracker, r1) = %v", err)
		}
		if !d.lease(t, d.Stores, "tracker", "r2", t0, time.Hour) {
			t.Error("Lease(tracker, r2) after r1 released it = false, want true")
		}
	}},
	{"another holder's release changes nothing", func(t *testing.T, d *db) {
		d.lease(t, d.Stores, "tracker", "r1", t0, time.Hour)
		if err := d.Release(ctx, "tracker", "r2"); err != nil {
			t.Fatalf("Release(tracker, r2) = %v", err)
		}
		if d.lease(t, d.Stores, "tracker", "r2", t0, time.Hour) {
			t.Error("Lease(tracker, r2) after r2 released r1's lease = true, want false")
		}
	}},
	{"an unknown lease", func(t *testing.T, d *db) {
		if err := d.Release(ctx, "nothing", "r1"); err != nil {
			t.Errorf("Release(nothing) = %v, want nil", err)
		}
	}},
}

var leasesCases = []testCase{
	{"empty", func(t *testing.T, d *db) {
		if ls, err := d.Leases(ctx); err != nil || len(ls) != 0 {
			t.Errorf("Leases() of a new store = %+v, %v; want none", ls, err)
		}
	}},
	{"by name, run out ones too", func(t *testing.T, d *db) {
		d.lease(t, d.Stores, "tracker", "r2", t0, time.Minute)
		d.lease(t, d.Stores, "source:zoom", "r1", t0.Add(-time.Hour), time.Minute)
		ls, err := d.Leases(ctx)
		want := []bridge.Lease{{Name: "source:zoom", Holder: "r1", Until: t0.Add(-59 * time.Minute)}, {Name: "tracker", Holder: "r2", Until: t0.Add(time.Minute)}}
		if err != nil || len(ls) != 2 || ls[0].Name != want[0].Name || ls[1].Name != want[1].Name ||
			!ls[0].Until.Equal(want[0].Until) || ls[1].Holder != "r2" {
			t.Errorf("Leases() = %+v, %v; want %+v", ls, err, want)
		}
	}},
}
