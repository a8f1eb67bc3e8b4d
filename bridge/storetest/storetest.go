// Package storetest is the suite every bridge.Store passes: the SQLite store today, a
// PostgreSQL one later. Run it from the implementation's tests with Run.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Run runs the suite; open returns a new, empty store for each test.
func Run(t *testing.T, open func(t *testing.T) bridge.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, bridge.Store)
	}{
		{"AddRecordingsIsIdempotent", testAddRecordings},
		{"CursorMovesWithTheJobs", testCursor},
		{"UpdateIsCompareAndSet", testUpdateCAS},
		{"EventsOnlyWithTheirChange", testEventsAtomic},
		{"ConcurrentClaimsHaveOneWinner", testConcurrentClaims},
		{"FiltersAndCounts", testFilters},
		{"InstanceIDIsStable", testInstanceID},
		{"MappingChangesAreCounted", testMappingChanges},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

// RunShared runs the tests that need two handles on one database, as two processes have (bridge
// run, and a command such as identities apply); open returns both, on a new, empty database.
func RunShared(t *testing.T, open func(t *testing.T) (first, second bridge.Store)) {
	tests := []struct {
		name string
		fn   func(*testing.T, bridge.Store, bridge.Store)
	}{
		{"MappingChangeSeenByTheOtherHandle", testMappingChangeShared},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := open(t)
			t.Cleanup(func() { a.Close(); b.Close() })
			tc.fn(t, a, b)
		})
	}
}

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

func rec(item, version string) bridge.Recording {
	return bridge.Recording{ItemID: item, Version: version, Name: item + ".wav", Size: 2048, ModTime: t0,
		Owner: &bridge.Owner{Provider: "zoom", ID: "u-1", Email: "a@b.c"}}
}

func testAddRecordings(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	added, err := s.AddRecordings(ctx, "inbox", []bridge.Recording{rec("a", "1"), rec("b", "1")}, "c1", t0)
	if err != nil || len(added) != 2 {
		t.Fatalf("AddRecordings = %d, %v; want 2 new jobs", len(added), err)
	}
	if added[0].State != bridge.StateDiscovered || added[0].Source != "inbox" || added[0].ID == "" {
		t.Errorf("new job = %+v", added[0])
	}
	again, err := s.AddRecordings(ctx, "inbox", []bridge.Recording{rec("a", "1"), rec("a", "2")}, "c2", t0)
	if err != nil || len(again) != 1 || again[0].Version != "2" {
		t.Fatalf("second sighting = %+v, %v; want only the new version", again, err)
	}
	other, _ := s.AddRecordings(ctx, "drive", []bridge.Recording{rec("a", "1")}, "", t0)
	if len(other) != 1 {
		t.Errorf("the same item in another source = %d jobs, want 1", len(other))
	}
	j, err := s.Job(ctx, added[0].ID)
	if err != nil || j.Owner == nil || j.Owner.Email != "a@b.c" || j.Size != 2048 || !j.ModTime.Equal(t0) {
		t.Errorf("Job() = %+v, %v; want the recording kept", j, err)
	}
	if _, err := s.Job(ctx, "missing"); !errors.Is(err, bridge.ErrNotFound) {
		t.Errorf("Job(missing) = %v, want ErrNotFound", err)
	}
	h, _ := s.History(ctx, added[0].ID)
	if len(h) != 1 || h[0].To != bridge.StateDiscovered {
		t.Errorf("history = %+v", h)
	}
}

func testCursor(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	if c, err := s.Cursor(ctx, "inbox"); c != "" || err != nil {
		t.Errorf("Cursor before any scan = %q, %v", c, err)
	}
	s.AddRecordings(ctx, "inbox", nil, "page-2", t0)
	if c, _ := s.Cursor(ctx, "inbox"); c != "page-2" {
		t.Errorf("Cursor = %q, want page-2", c)
	}
}

func testUpdateCAS(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	added, _ := s.AddRecordings(ctx, "inbox", []bridge.Recording{rec("a", "1")}, "", t0)
	j := added[0]
	j.State, j.IdempotencyKey, j.AttemptAt, j.UpdatedAt = bridge.StateUploading, "key-1", t0, t0.Add(time.Second)
	if err := s.Update(ctx, &j, bridge.StateDiscovered, "uploading"); err != nil {
		t.Fatal(err)
	}
	stale := j
	stale.State = bridge.StateSkipped
	if err := s.Update(ctx, &stale, bridge.StateDiscovered, "late"); !errors.Is(err, bridge.ErrConflict) {
		t.Errorf("Update from a stale state = %v, want ErrConflict", err)
	}
	got, _ := s.Job(ctx, j.ID)
	if got.State != bridge.StateUploading || got.IdempotencyKey != "key-1" || !got.AttemptAt.Equal(t0) {
		t.Errorf("stored job = %+v", got)
	}
	h, _ := s.History(ctx, j.ID)
	if len(h) != 2 || h[1].From != bridge.StateDiscovered || h[1].To != bridge.StateUploading || h[1].Reason != "uploading" {
		t.Errorf("history = %+v", h)
	}
}

func testEventsAtomic(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	added, _ := s.AddRecordings(ctx, "inbox", []bridge.Recording{rec("a", "1")}, "", t0)
	j := added[0]
	j.State = bridge.StateSkipped
	// A conflicting update writes no event.
	if err := s.Update(ctx, &j, bridge.StateReady, "x", bridge.NewEvent(bridge.EventSkipped, &j, nil)); !errors.Is(err, bridge.ErrConflict) {
		t.Fatalf("Update = %v, want ErrConflict", err)
	}
	if ev, _ := s.PendingEvents(ctx, 10); len(ev) != 0 {
		t.Errorf("a failed update left %d events", len(ev))
	}
	if err := s.Update(ctx, &j, bridge.StateDiscovered, "too small", bridge.NewEvent(bridge.EventSkipped, &j, map[string]any{"reason": "too small"})); err != nil {
		t.Fatal(err)
	}
	ev, _ := s.PendingEvents(ctx, 10)
	if len(ev) != 1 || ev[0].Type != bridge.EventSkipped || ev[0].JobID != j.ID || len(ev[0].Data) == 0 {
		t.Fatalf("events = %+v", ev)
	}
}

func testConcurrentClaims(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	added, _ := s.AddRecordings(ctx, "inbox", []bridge.Recording{rec("a", "1")}, "", t0)
	var wins, conflicts int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := added[0]
			j.State, j.IdempotencyKey = bridge.StateUploading, fmt.Sprint("key-", i)
			err := s.Update(ctx, &j, bridge.StateDiscovered, "claim")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, bridge.ErrConflict):
				conflicts++
			default:
				t.Errorf("claim %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Errorf("8 concurrent claims: %d won, %d conflicted; want 1 and 7", wins, conflicts)
	}
}

func testFilters(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	added, _ := s.AddRecordings(ctx, "inbox", []bridge.Recording{rec("a", "1"), rec("b", "1"), rec("c", "1")}, "", t0)
	s.AddRecordings(ctx, "drive", []bridge.Recording{rec("d", "1")}, "", t0)
	j := added[1]
	j.State, j.NextAt = bridge.StateHeld, t0.Add(time.Hour)
	s.Update(ctx, &j, bridge.StateDiscovered, "no member")
	if got, _ := s.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateDiscovered}, Source: "inbox"}); len(got) != 2 || got[0].ItemID != "a" {
		t.Errorf("discovered in inbox = %d jobs", len(got))
	}
	if got, _ := s.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateHeld}, DueBefore: t0}); len(got) != 0 {
		t.Errorf("held jobs due now = %d, want 0 (due in an hour)", len(got))
	}
	if got, _ := s.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateHeld}, DueBefore: t0.Add(2 * time.Hour)}); len(got) != 1 {
		t.Errorf("held jobs due in two hours = %d, want 1", len(got))
	}
	if got, _ := s.Jobs(ctx, bridge.JobFilter{Limit: 2}); len(got) != 2 {
		t.Errorf("Limit 2 gave %d", len(got))
	}
	counts, _ := s.Counts(ctx)
	if counts[bridge.StateDiscovered] != 3 || counts[bridge.StateHeld] != 1 {
		t.Errorf("Counts = %v", counts)
	}
}

func testInstanceID(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	a, err := s.InstanceID(ctx)
	b, _ := s.InstanceID(ctx)
	if err != nil || a == "" || a != b {
		t.Errorf("InstanceID = %q, %q, %v; want one stable id", a, b, err)
	}
}

func testMappingChanges(t *testing.T, s bridge.Store) {
	ctx := context.Background()
	if ch, err := s.LastMappingChange(ctx); err != nil || ch.Generation != 0 || ch.Reason != "" || !ch.At.IsZero() {
		t.Fatalf("LastMappingChange before any = %+v, %v; want generation 0", ch, err)
	}
	tests := []struct {
		reason string
		at     time.Time
		want   int64
	}{
		{"identities apply --source zoom: 1 created", t0, 1},
		{"jobs release j-1", t0.Add(time.Minute), 2},
		{"", t0.Add(2 * time.Minute), 3},
	}
	for _, tc := range tests {
		ch, err := s.NoteMappingChange(ctx, tc.reason, tc.at)
		if err != nil || ch.Generation != tc.want || ch.Reason != tc.reason || !ch.At.Equal(tc.at) {
			t.Errorf("NoteMappingChange(%q) = %+v, %v; want generation %d", tc.reason, ch, err, tc.want)
		}
		if last, err := s.LastMappingChange(ctx); err != nil || last.Generation != ch.Generation || last.Reason != ch.Reason || !last.At.Equal(ch.At) {
			t.Errorf("LastMappingChange after %q = %+v, %v; want %+v", tc.reason, last, err, ch)
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.NoteMappingChange(ctx, fmt.Sprint("concurrent ", i), t0); err != nil {
				t.Errorf("concurrent NoteMappingChange: %v", err)
			}
		}()
	}
	wg.Wait()
	if ch, _ := s.LastMappingChange(ctx); ch.Generation != 11 {
		t.Errorf("after 3 and 8 concurrent changes the generation is %d, want 11 (none lost)", ch.Generation)
	}
}

func testMappingChangeShared(t *testing.T, a, b bridge.Store) {
	ctx := context.Background()
	if _, err := a.NoteMappingChange(ctx, "identities apply --source zoom", t0); err != nil {
		t.Fatal(err)
	}
	if ch, err := b.LastMappingChange(ctx); err != nil || ch.Generation != 1 || ch.Reason != "identities apply --source zoom" || !ch.At.Equal(t0) {
		t.Errorf("the other handle sees %+v, %v; want generation 1 and its reason", ch, err)
	}
	if _, err := b.NoteMappingChange(ctx, "jobs release", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if ch, _ := a.LastMappingChange(ctx); ch.Generation != 2 || ch.Reason != "jobs release" {
		t.Errorf("the first handle sees %+v; want generation 2", ch)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			if _, err := s.NoteMappingChange(ctx, "both at once", t0); err != nil {
				t.Errorf("NoteMappingChange %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for name, s := range map[string]bridge.Store{"first": a, "second": b} {
		if ch, _ := s.LastMappingChange(ctx); ch.Generation != 10 {
			t.Errorf("the %s handle sees generation %d after 2 and 8 concurrent changes from both, want 10", name, ch.Generation)
		}
	}
}
