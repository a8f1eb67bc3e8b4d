package bridge_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

// heldJob stores one job in a new store and moves it to state (held: unmapped).
func heldJob(t *testing.T, state bridge.State) (*sqlite.Store, bridge.Job) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	added, err := s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a.wav", Version: "1", Name: "a.wav"}}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j := added[0]
	if state == bridge.StateHeld {
		j.Hold = bridge.HoldUnmapped
	}
	j.NextAt = time.Now().Add(time.Minute)
	if err := bridge.Move(ctx, s, &j, state, "unmapped: no member matches", time.Now()); err != nil {
		t.Fatal(err)
	}
	return s, j
}

// TestRelease: a held job released by hand goes back to discovered with its author, due now,
// through the transition function (its history says so); a job not held, an unknown job and a
// bad author are refused and change nothing.
func TestRelease(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	s, held := heldJob(t, bridge.StateHeld)
	j, err := bridge.Release(ctx, s, held.ID, "email:owner@acme.test", now)
	if err != nil {
		t.Fatalf("Release(held) = %v", err)
	}
	got, _ := s.Job(ctx, held.ID)
	if got.State != bridge.StateDiscovered || got.Author != "email:owner@acme.test" || got.Hold != "" || !got.NextAt.IsZero() || j.State != got.State {
		t.Errorf("job after Release = %+v, want discovered, the author, no hold, due now", got)
	}
	h, _ := s.History(ctx, held.ID)
	if last := h[len(h)-1]; last.From != bridge.StateHeld || last.To != bridge.StateDiscovered || last.Reason != "released by hand: author email:owner@acme.test" {
		t.Errorf("last change = %+v, want held → discovered, released by hand", last)
	}
	if _, err := bridge.Release(ctx, s, held.ID, "email:owner@acme.test", now); !errors.Is(err, bridge.ErrNotHeld) {
		t.Errorf("Release(discovered) = %v, want ErrNotHeld", err)
	}
	if _, err := bridge.Release(ctx, s, "missing", "email:owner@acme.test", now); !errors.Is(err, bridge.ErrNotFound) {
		t.Errorf("Release(missing) = %v, want ErrNotFound", err)
	}
	s2, held2 := heldJob(t, bridge.StateHeld)
	if _, err := bridge.Release(ctx, s2, held2.ID, "owner@acme.test", now); err == nil {
		t.Error("Release with an author of no known form = nil, want an error")
	}
	if got, _ := s2.Job(ctx, held2.ID); got.State != bridge.StateHeld || got.Author != "" {
		t.Errorf("job after a refused Release = %+v, want it held, unchanged", got)
	}
}
