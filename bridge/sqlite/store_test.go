package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) bridge.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.AddRecordings(ctx, "inbox", []bridge.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "c", bridge.Recording{}.ModTime)
	id, _ := s.InstanceID(ctx)
	s.Close()
	s, err = sqlite.Open(ctx, path) // migrations run again without harm
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jobs, _ := s.Jobs(ctx, bridge.JobFilter{})
	again, _ := s.InstanceID(ctx)
	if len(jobs) != 1 || again != id {
		t.Errorf("after reopening: %d jobs, instance %s (was %s)", len(jobs), again, id)
	}
}
