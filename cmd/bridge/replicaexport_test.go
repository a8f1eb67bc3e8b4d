package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// exportFolder is what a folder destination holds: the manifests by file name, and the other
// files.
type exportFolder struct {
	manifests map[string]export.Manifest
	others    []string
}

// readExportFolder reads the manifests in dir (manifest.json, manifest-<stamp>.json) and lists
// the other files.
func readExportFolder(t *testing.T, dir string) exportFolder {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := exportFolder{manifests: map[string]export.Manifest{}}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "manifest") || !strings.HasSuffix(name, ".json") {
			f.others = append(f.others, name)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var m export.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("manifest %s: %v", name, err)
		}
		f.manifests[name] = m
	}
	return f
}

// exportFigures sum the export's runs up for the log.
type exportFigures struct {
	runs      map[bridge.ExportStatus]int
	manifests int
	archives  int
	partials  int // scratch files of killed attempts
	journals  int
	ticks     []string // the runs' ticks, oldest first; those not completed marked with their state
}

func (e exportFigures) String() string {
	return fmt.Sprintf("runs %v at ticks %v; %d manifests, %d archives, %d scratch files left by killed runs, %d journals left",
		e.runs, e.ticks, e.manifests, e.archives, e.partials, e.journals)
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

func tickKey(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// checkExports checks that export name produced each tick once: a completed run in the store
// for each manifest in dir and the reverse, one manifest per tick, every archive in dir listed
// by exactly one manifest with its size and checksum, and every transcript the store says was
// exported in exactly one manifest.
func checkExports(t *testing.T, store bridge.Store, dir, name string) exportFigures {
	t.Helper()
	ctx := context.Background()
	runs, err := store.Runs(ctx, name, 100000)
	if err != nil {
		t.Fatal(err)
	}
	folder := readExportFolder(t, dir)
	fig := exportFigures{runs: map[bridge.ExportStatus]int{}, manifests: len(folder.manifests)}
	byTick := map[string][]string{}
	for file, m := range folder.manifests {
		byTick[tickKey(m.Tick)] = append(byTick[tickKey(m.Tick)], file)
	}
	completed := map[string]bool{}
	for _, r := range runs {
		st := r.State(time.Now())
		fig.runs[st]++
		tick := r.Tick.UTC().Format("15:04:05")
		if st != bridge.ExportCompleted {
			tick += "(" + string(st) + ")"
		}
		fig.ticks = append([]string{tick}, fig.ticks...) // runs come newest first
		k := tickKey(r.Tick)
		files := byTick[k]
		switch {
		case r.Status == bridge.ExportCompleted && len(files) != 1:
			t.Errorf("completed run of tick %s has manifests %v, want one", k, files)
		case r.Status == bridge.ExportCompleted && folder.manifests[files[0]].Counts.Exported != r.Exported:
			t.Errorf("run of tick %s exported %d, its manifest %s says %d", k, r.Exported, files[0], folder.manifests[files[0]].Counts.Exported)
		}
		completed[k] = r.Status == bridge.ExportCompleted
	}
	for k, files := range byTick {
		if !completed[k] {
			t.Errorf("manifests %v of tick %s, whose run did not complete", files, k)
		}
	}
	checkArchives(t, dir, folder, &fig)
	checkExportedOnce(t, store, name, folder)
	return fig
}

// checkArchives: every ZIP in the folder is listed by exactly one manifest, with its size and
// checksum.
func checkArchives(t *testing.T, dir string, folder exportFolder, fig *exportFigures) {
	t.Helper()
	listed := map[string]string{}
	for _, file := range sortedKeys(folder.manifests) {
		for _, a := range folder.manifests[file].Archives {
			if prev, dup := listed[a.File]; dup {
				t.Errorf("archive %s is listed by %s and %s", a.File, prev, file)
			}
			listed[a.File] = file
			b, err := os.ReadFile(filepath.Join(dir, a.File))
			if err != nil {
				t.Errorf("archive %s of %s: %v", a.File, file, err)
				continue
			}
			if sum := sha256.Sum256(b); int64(len(b)) != a.Size || hex.EncodeToString(sum[:]) != a.SHA256 {
				t.Errorf("archive %s is not the one %s describes (size %d, want %d)", a.File, file, len(b), a.Size)
			}
		}
	}
	for _, name := range folder.others {
		switch {
		case strings.HasSuffix(name, ".zip"):
			fig.archives++
			if listed[name] == "" {
				t.Errorf("archive %s belongs to no manifest (left by a killed or failed attempt)", name)
			}
		case strings.HasPrefix(name, ".partial-"):
			fig.partials++
		case strings.HasPrefix(name, ".bridge-run"): // a run's journal: a killed run's, not yet cleaned up
			fig.journals++
		default:
			t.Errorf("unexpected file %s in the export folder", name)
		}
	}
}

// checkExportedOnce: no transcript is in two manifests, and the manifests list exactly what the
// store recorded as exported.
func checkExportedOnce(t *testing.T, store bridge.Store, name string, folder exportFolder) {
	t.Helper()
	in := map[string]string{}
	var ids []string
	for _, file := range sortedKeys(folder.manifests) {
		for _, tr := range folder.manifests[file].Transcripts {
			if prev, dup := in[tr.ID]; dup {
				a, b := folder.manifests[prev], folder.manifests[file]
				t.Errorf("transcript %s (%s) is exported by %s (window %s..%s, written %s) and %s (window %s..%s, written %s)",
					tr.ID, tr.ExternalID, prev, clock(a.Window.From), clock(a.Window.Until), clock(a.WrittenAt),
					file, clock(b.Window.From), clock(b.Window.Until), clock(b.WrittenAt))
				continue
			}
			in[tr.ID] = file
			ids = append(ids, tr.ID)
		}
	}
	done, err := store.Exported(context.Background(), name, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !done[id] {
			t.Errorf("transcript %s is in %s, but the store does not record it as exported", id, in[id])
		}
	}
}
