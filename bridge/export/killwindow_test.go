package export_test

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/export"
)

// errKilled is what a dying destination answers once its process is "dead".
var errKilled = errors.New("killed")

// dying is a destination whose process dies right after committing the first file that kill
// picks: every commit after it fails, and its run is never recorded (the test ignores what
// Write returns), as nothing more happens in a killed process.
type dying struct {
	export.Destination
	kill func(name string) bool
	dead bool
}

// Commit implements export.Destination.
func (d *dying) Commit(ctx context.Context, f, name string) error {
	if d.dead {
		os.Remove(f)
		return errKilled
	}
	err := d.Destination.Commit(ctx, f, name)
	d.dead = err == nil && d.kill(name)
	return err
}

// TestKilledRightAfterACommit: a run killed just after a file of its reached the destination
// (before anything else happened) and tried again at the same tick leaves one manifest, and
// every file there listed by it. Issue 32's kill test found a tick with two manifests: the
// first attempt's manifest.json, which its journal did not name yet, taken by the retry for
// another run's (kept, and its own written as manifest-<tick>.json).
func TestKilledRightAfterACommit(t *testing.T) {
	f := withStore(t, newFixture(t, 6))
	isManifest := func(name string) bool { return name == export.ManifestName }
	firstFile := func(name string) bool { return !strings.HasPrefix(name, ".") }
	for _, tc := range []struct {
		name, layout string
		kill         func(string) bool
	}{
		{"zip/after its first archive", export.LayoutZip, firstFile},
		{"zip/after its manifest", export.LayoutZip, isManifest},
		{"files/after its first transcript", export.LayoutFiles, firstFile},
		{"files/after its manifest", export.LayoutFiles, isManifest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			c := config(t, tc.layout, dir, f.start)
			tick := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
			w := export.Window{From: f.start, Until: tick}
			items, err := f.ex.List(ctx, c, w)
			if err != nil {
				t.Fatal(err)
			}
			dest, err := export.Open(ctx, c, dir)
			if err != nil {
				t.Fatal(err)
			}
			d := &dying{Destination: dest, kill: tc.kill}
			if _, err := f.ex.Write(ctx, c, tick, w, items, d, func() {}); !d.dead || err != nil && !errors.Is(err, errKilled) {
				t.Fatalf("Write on a dying destination = %v, dead %v; want it dead, and nil or %v", err, d.dead, errKilled)
			}
			m, err := f.ex.Write(ctx, c, tick, w, items, dest, func() {})
			if err != nil {
				t.Fatalf("Write again at the same tick: %v", err)
			}
			listed := []string{export.ManifestName}
			for _, a := range m.Archives {
				listed = append(listed, a.File)
			}
			if tc.layout == export.LayoutFiles {
				for _, tr := range m.Transcripts {
					listed = append(listed, tr.File)
				}
			}
			if got := filesIn(t, dir); strings.Join(got, ", ") != strings.Join(sorted(listed), ", ") {
				t.Errorf("files at the destination = %v, want %v (the manifest and what it lists)", got, sorted(listed))
			}
		})
	}
}

// filesIn lists dir's files, sorted, without the dot files (the run's journal, scratch files).
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
