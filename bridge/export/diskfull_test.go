package export_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/internal/tmpfstest"
)

// TestExportToAFullDiskFailsAndLeavesNothing: an export whose destination folder is on a full
// 4 MiB tmpfs fails that run with the reason (no space, naming the folder), recorded on the
// run, and leaves no file at the destination, no partial archive among them; once space is
// freed, the next run of the same tick exports everything.
func TestExportToAFullDiskFailsAndLeavesNothing(t *testing.T) {
	fs := tmpfstest.Mount(t, 4<<20)
	f := withStore(t, newFixture(t, 40))
	dest := filepath.Join(fs, "exports")
	c := config(t, export.LayoutZip, dest, f.start)
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	filler := tmpfstest.Fill(t, fs, 8<<10) // room for a few pages of the archive, not all of it
	tick := time.Now().UTC().Add(time.Minute)
	_, err := f.ex.RunTick(context.Background(), c, tick)
	if !errors.Is(err, bridge.ErrNoSpace) || !strings.Contains(err.Error(), dest) {
		t.Fatalf("RunTick on a full disk = %v, want a no-space error naming %q", err, dest)
	}
	t.Logf("RunTick on a full disk: %v", err)
	left, _ := os.ReadDir(dest)
	for _, e := range left {
		t.Errorf("left at the destination after the failed run: %s", e.Name())
	}
	runs, _ := f.store.Runs(context.Background(), "nightly", 0)
	if len(runs) != 1 || runs[0].Status != bridge.ExportFailed || !strings.Contains(runs[0].Error, "no space left") {
		t.Errorf("runs = %+v, want one failed with the reason", runs)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	m, err := f.ex.RunTick(context.Background(), c, tick)
	if err != nil || m.Counts.Exported != 40 {
		t.Fatalf("RunTick after space was freed = %+v, %v; want 40 exported", m, err)
	}
}
