package export_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestArchiveRetention: local run folders past their age, or beyond the newest count of their
// export, are removed, and only those; a folder holding another run's manifest (shared) and an
// S3 run are never touched.
func TestArchiveRetention(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	type run struct {
		export string
		age    time.Duration
		loc    string // "": its own folder
	}
	runs := []run{{"daily", 40 * day, ""}, {"daily", 20 * day, ""}, {"daily", 1 * day, ""}, {"weekly", 60 * day, ""},
		{"weekly", 50 * day, "shared"}, {"s3", 90 * day, "s3://bucket/x"}}
	for _, tc := range []struct {
		keep export.Keep
		want []int // indexes of runs removed
	}{
		{export.Keep{Age: 30 * day}, []int{0, 3}},
		{export.Keep{Count: 1}, []int{0, 1, 3}}, // weekly's newest is the shared one
		{export.Keep{}, nil},
	} {
		store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		base := t.TempDir()
		var dirs []string
		for i, r := range runs {
			tick := now.Add(-r.age)
			loc := filepath.Join(base, r.export+"-"+tick.Format("20060102"))
			manifest := export.Manifest{Export: r.export, Tick: tick}
			switch {
			case r.loc == "shared":
				loc = filepath.Join(base, "shared")
				manifest.Tick = now // another run wrote it since
			case r.loc != "":
				loc = r.loc
			}
			if r.loc != "s3://bucket/x" {
				os.MkdirAll(loc, 0o755)
				b, _ := json.Marshal(manifest)
				os.WriteFile(filepath.Join(loc, export.ManifestName), b, 0o644)
				os.WriteFile(filepath.Join(loc, "a.md"), []byte("transcript"), 0o644)
			}
			dirs = append(dirs, loc)
			if ok, err := store.ClaimRun(ctx, r.export, tick, tick, time.Minute); err != nil || !ok {
				t.Fatalf("ClaimRun(%d) = %v, %v", i, ok, err)
			}
			if err := store.FinishRun(ctx, bridge.ExportRun{Export: r.export, Tick: tick, Status: bridge.ExportCompleted, Location: loc,
				FinishedAt: tick.Add(time.Minute)}, nil, time.Time{}, bridge.Event{}); err != nil {
				t.Fatal(err)
			}
		}
		expired, err := export.Expired(ctx, store, tc.keep, now)
		if err != nil || len(expired) != len(tc.want) {
			t.Errorf("Expired(%+v) = %d runs, %v; want %d", tc.keep, len(expired), err, len(tc.want))
		}
		n, err := export.PurgeArchives(ctx, store, tc.keep, now, 100)
		if err != nil || n != len(tc.want) {
			t.Errorf("PurgeArchives(%+v) = %d, %v; want %d", tc.keep, n, err, len(tc.want))
		}
		removed := map[int]bool{}
		for _, i := range tc.want {
			removed[i] = true
		}
		for i, d := range dirs {
			if runs[i].loc == "s3://bucket/x" {
				continue
			}
			_, err := os.Stat(d)
			if gone := os.IsNotExist(err); gone != removed[i] {
				t.Errorf("keep %+v: run %d (%s, %v old) removed = %v, want %v", tc.keep, i, runs[i].export, runs[i].age, gone, removed[i])
			}
		}
		if n, err := export.PurgeArchives(ctx, store, tc.keep, now, 100); err != nil || n != 0 {
			t.Errorf("PurgeArchives(%+v) again = %d, %v; want nothing left", tc.keep, n, err)
		}
	}
}
