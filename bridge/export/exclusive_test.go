package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// slowAPI delays bulk exports, as a large run or a slow service would.
type slowAPI struct{ *api.Client }

func (s slowAPI) ExportBulk(ctx context.Context, ids []string, format string) (*api.Download, error) {
	time.Sleep(500 * time.Millisecond)
	return s.Client.ExportBulk(ctx, ids, format)
}

func (s slowAPI) All(ctx context.Context, p api.ListParams) iter.Seq2[api.ListItem, error] {
	return s.Client.All(ctx, p)
}

// minuteConfig is an export every minute to dir, since an hour before f's transcripts.
func minuteConfig(t *testing.T, f *fixture, layout, dir string) *export.Config {
	t.Helper()
	c := &export.Config{Name: "nightly", Schedule: "* * * * *", Format: "md", Layout: layout, Destination: dir,
		Since: f.start.Add(-time.Hour).Format(time.RFC3339)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// folderRuns reads what dir holds: the manifests by file name, and the other files.
func folderRuns(t *testing.T, dir string) (map[string]export.Manifest, []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	manifests := map[string]export.Manifest{}
	var others []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "manifest") {
			others = append(others, e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		var m export.Manifest
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		manifests[e.Name()] = m
	}
	return manifests, others
}

// checkOneRecord checks that dir is the export's record and nothing else: each manifest is a
// completed run's, no transcript is in two, every other file is an archive a manifest lists
// (no journal, nothing of a run that did not complete). It returns the transcripts exported.
func checkOneRecord(t *testing.T, store export.Store, dir string) int {
	t.Helper()
	manifests, others := folderRuns(t, dir)
	runs, err := store.Runs(context.Background(), "nightly", 0)
	if err != nil {
		t.Fatal(err)
	}
	completed := map[time.Time]bool{}
	for _, r := range runs {
		completed[r.Tick.UTC()] = r.Status == bridge.ExportCompleted
	}
	in, listed := map[string]string{}, map[string]bool{}
	for file, m := range manifests {
		if !completed[m.Tick.UTC()] {
			t.Errorf("manifest %s of tick %v, whose run did not complete (runs %+v)", file, m.Tick, runs)
		}
		for _, a := range m.Archives {
			listed[a.File] = true
		}
		for _, tr := range m.Transcripts {
			if prev, dup := in[tr.ID]; dup {
				t.Errorf("transcript %s is in %s and %s", tr.ID, prev, file)
			}
			in[tr.ID] = file
			if tr.Archive == "" { // layout files
				listed[tr.File] = true
			}
		}
	}
	for _, name := range others {
		if !listed[name] {
			t.Errorf("%s is in the folder but in no manifest (of %d)", name, len(manifests))
		}
	}
	return len(in)
}

// TestOneRunPerExport: two replicas run two different ticks of one export at once (a minute
// and the next, or a catch-up and the schedule) against a slow service. The second finds the
// first in progress: the scheduled one does nothing (ErrBusy), a manual one waits and then
// starts from the checkpoint the first moved. Without the export's lease both start from the
// same checkpoint and export the same transcripts; on one folder one manifest overwrites the
// other's.
func TestOneRunPerExport(t *testing.T) {
	f := newFixture(t, 5)
	for _, manual := range []bool{false, true} {
		store := withStore(t, f).store
		dir := t.TempDir()
		c := minuteConfig(t, f, export.LayoutZip, dir)
		a := &export.Exporter{Store: store, API: slowAPI{f.client}}
		b := &export.Exporter{Store: store, API: slowAPI{f.client}}
		t2 := time.Now().UTC().Add(2 * time.Minute).Truncate(time.Minute)
		var wg sync.WaitGroup
		var ma, mb *export.Manifest
		var ea, eb error
		wg.Go(func() { ma, ea = a.RunTick(context.Background(), c, t2) })
		time.Sleep(100 * time.Millisecond)
		if manual {
			mb, eb = b.RunWindow(context.Background(), c, t2.Add(-time.Minute), export.Window{}, false)
		} else {
			mb, eb = b.RunTick(context.Background(), c, t2.Add(-time.Minute))
		}
		wg.Wait()
		if ea != nil || ma == nil || ma.Counts.Exported != 5 {
			t.Fatalf("manual %v: the first run = %+v, %v; want 5 exported", manual, ma, ea)
		}
		want := export.ErrBusy
		if manual {
			want = export.ErrEmptyWindow // it waited: the checkpoint is past its tick now
		}
		if !errors.Is(eb, want) || mb != nil {
			t.Errorf("manual %v: the second run, of an earlier tick = %+v, %v; want %v", manual, mb, eb, want)
		}
		if n := checkOneRecord(t, store, dir); n != 5 {
			t.Errorf("manual %v: %d transcripts exported, want 5", manual, n)
		}
		if ls, _ := store.Leases(context.Background()); len(ls) != 0 {
			t.Errorf("leases left: %+v", ls)
		}
	}
}

// dyingStore is the store of a process killed just before FinishRun commits (after the
// manifest): FinishRun and Release never happen.
type dyingStore struct{ export.Store }

func (dyingStore) FinishRun(context.Context, bridge.ExportRun, []string, time.Time, bridge.Event) error {
	return errors.New("killed")
}

func (dyingStore) Release(context.Context, string, string) error { return nil }

// TestKilledBeforeFinishIsSuperseded: a run killed between its manifest and FinishRun leaves
// its archive, manifest and journal, and stays running. Once its lease runs out, the next run,
// of another tick or of the same one, removes them (or rewrites them) and completes: one
// completed manifest per transcript, no archive without its run, the killed run failed (a
// later tick) or completed (its own tick again). Before, the journal was gone before FinishRun
// and the next tick exported the same transcripts again beside the orphaned manifest.
func TestKilledBeforeFinishIsSuperseded(t *testing.T) {
	f := newFixture(t, 5)
	for _, layout := range []string{export.LayoutZip, export.LayoutFiles} {
		for _, sameTick := range []bool{false, true} {
			ctx := context.Background()
			store := withStore(t, f).store
			dir := t.TempDir()
			c := minuteConfig(t, f, layout, dir)
			t1 := time.Now().UTC().Add(2 * time.Minute).Truncate(time.Minute)
			dying := &export.Exporter{Store: dyingStore{store}, API: f.client, Lease: time.Second}
			if _, err := dying.RunTick(ctx, c, t1); err == nil {
				t.Fatal("the dying run finished")
			}
			if manifests, _ := folderRuns(t, dir); len(manifests) != 1 {
				t.Fatalf("%s: the killed run left manifests %v; want its own", layout, manifests)
			}
			time.Sleep(1100 * time.Millisecond) // its lease runs out
			next := &export.Exporter{Store: store, API: f.client, Lease: time.Second}
			t2 := t1.Add(time.Minute)
			if sameTick {
				t2 = t1 // the catch-up of a cut-short tick
			}
			if m, err := next.RunTick(ctx, c, t2); err != nil || m.Counts.Exported != 5 {
				t.Fatalf("%s: the next run = %+v, %v; want 5 exported", layout, m, err)
			}
			if n := checkOneRecord(t, store, dir); n != 5 {
				t.Errorf("%s: %d transcripts in the folder's manifests, want 5", layout, n)
			}
			runs, _ := store.Runs(ctx, "nightly", 0)
			if !sameTick && (len(runs) != 2 || runs[1].Status != bridge.ExportFailed || !strings.Contains(runs[1].Error, "abandoned")) {
				t.Errorf("%s: runs %+v; want the killed one failed, abandoned", layout, runs)
			}
			if sameTick && (len(runs) != 1 || runs[0].Status != bridge.ExportCompleted) {
				t.Errorf("%s: runs %+v; want the tick completed", layout, runs)
			}
		}
	}
}

// failingAPI fails the export of every transcript after the first two.
type failingAPI struct {
	*api.Client
	mu sync.Mutex
	n  int
}

func (a *failingAPI) Export(ctx context.Context, id, format string) (*api.Download, error) {
	a.mu.Lock()
	a.n++
	n := a.n
	a.mu.Unlock()
	if n > 2 {
		return nil, errors.New("service unavailable")
	}
	return a.Client.Export(ctx, id, format)
}

// TestFailedRunLeavesNothing: a run that fails part way removes what it wrote (its files are
// no run's record), and the next one exports everything once.
func TestFailedRunLeavesNothing(t *testing.T) {
	f := withStore(t, newFixture(t, 5))
	dir := t.TempDir()
	c := minuteConfig(t, f, export.LayoutFiles, dir)
	tick := time.Now().UTC().Add(2 * time.Minute).Truncate(time.Minute)
	bad := &export.Exporter{Store: f.store, API: &failingAPI{Client: f.client}}
	if _, err := bad.RunTick(context.Background(), c, tick); err == nil {
		t.Fatal("the failing run completed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed run left %d files", len(entries))
	}
	if m, err := f.ex.RunTick(context.Background(), c, tick.Add(time.Minute)); err != nil || m.Counts.Exported != 5 {
		t.Fatalf("the next run = %+v, %v", m, err)
	}
	if n := checkOneRecord(t, f.store, dir); n != 5 {
		t.Errorf("%d transcripts exported, want 5", n)
	}
}

// TestEmptyWindowIsSilent: a schedule under a minute runs the minute's tick once; its other
// firings in that minute find nothing left before the tick and log no error.
func TestEmptyWindowIsSilent(t *testing.T) {
	f := withStore(t, newFixture(t, 3))
	c := minuteConfig(t, f, export.LayoutZip, t.TempDir())
	c.Schedule = "@every 1s"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	f.ex.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	stop, err := f.ex.Schedule(context.Background(), []*export.Config{c})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3500 * time.Millisecond)
	stop()
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the schedule logged errors:\n%s", logs.String())
	}
	runs, _ := f.store.Runs(context.Background(), c.Name, 0)
	if len(runs) == 0 || runs[0].Status != bridge.ExportCompleted {
		t.Fatalf("runs %+v; want the minute's completed", runs)
	}
	if _, err := f.ex.RunTick(context.Background(), c, runs[0].Tick); !errors.Is(err, export.ErrEmptyWindow) && !errors.Is(err, export.ErrBusy) {
		t.Errorf("the minute's tick again = %v; want ErrEmptyWindow or ErrBusy", err)
	}
}
