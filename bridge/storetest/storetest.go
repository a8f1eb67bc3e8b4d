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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
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
