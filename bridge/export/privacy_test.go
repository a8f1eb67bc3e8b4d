package export_test

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// deletingAPI deletes victim upstream just before its download: deleted after it was listed.
type deletingAPI struct {
	*api.Client
	victim string
}

func (d deletingAPI) Export(ctx context.Context, id, format string) (*api.Download, error) {
	if id == d.victim {
		if err := d.Client.Delete(ctx, id); err != nil {
			return nil, err
		}
	}
	return d.Client.Export(ctx, id, format)
}

// TestExportsLeaveForgottenOut: a transcription with a tombstone (forgotten, its deletion
// upstream not done) is left out of an export even though it is still listed, and one deleted
// between the listing and its download is skipped and reported to Gone, once.
func TestExportsLeaveForgottenOut(t *testing.T) {
	ctx := context.Background()
	f := withStore(t, newFixture(t, 3))
	var items []string
	for it, err := range f.client.All(ctx, api.ListParams{Status: "completed"}) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it.ID)
	}
	if len(items) != 3 {
		t.Fatalf("listed %d, want 3", len(items))
	}
	forgotten, victim := items[0], items[1]
	if _, err := f.store.Forget(ctx, bridge.Tombstone{JobID: "j-forgotten", Source: "inbox", ItemID: "x", TranscriptionID: forgotten, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var gone []string
	f.ex.API = deletingAPI{f.client, victim}
	f.ex.Gone = func(_ context.Context, id string) { gone = append(gone, id) }
	c := config(t, export.LayoutFiles, t.TempDir(), f.start)
	m, err := f.ex.RunWindow(ctx, c, time.Now().UTC(), export.Window{From: f.start, Until: time.Now().UTC().Add(time.Minute)}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range m.Transcripts {
		if tr.ID == forgotten || tr.ID == victim {
			t.Errorf("exported %s; want the forgotten and the deleted left out", tr.ID)
		}
	}
	for _, s := range m.Skipped {
		if s.ID == forgotten {
			t.Errorf("the forgotten transcription is listed as skipped (%+v); want it left out silently", s)
		}
	}
	if m.Counts.Exported != 1 || len(gone) != 1 || gone[0] != victim {
		t.Errorf("exported %d, Gone heard %v; want 1 and [%s]", m.Counts.Exported, gone, victim)
	}
}

// TestRemoveCopies: forgetting a transcription removes its exported file (layout files) and
// its entry of a ZIP (layout zip), and the manifests lose it with their archive's size,
// checksum and count right again; a dry run changes nothing, a second run finds nothing.
func TestRemoveCopies(t *testing.T) {
	ctx := context.Background()
	f := withStore(t, newFixture(t, 3))
	var victim string
	for it, err := range f.client.All(ctx, api.ListParams{Status: "completed", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		victim = it.ID
		break
	}
	dirs := map[string]string{}
	for _, layout := range []string{export.LayoutFiles, export.LayoutZip} {
		c := config(t, layout, filepath.Join(t.TempDir(), layout), f.start)
		c.Name = layout
		tick := time.Now().UTC().Truncate(time.Minute)
		if _, err := f.ex.RunTick(ctx, c, tick.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		runs, err := f.store.Runs(ctx, layout, 1)
		if err != nil || len(runs) != 1 {
			t.Fatalf("Runs(%s) = %v, %v", layout, runs, err)
		}
		dirs[layout] = runs[0].Location
	}
	dry, err := export.RemoveCopies(ctx, f.store, victim, true)
	if err != nil || len(dry) != 2 {
		t.Fatalf("RemoveCopies dry run = %v, %v; want 2 copies", dry, err)
	}
	if m := readManifest(t, dirs[export.LayoutFiles]); m.Counts.Exported != 3 {
		t.Errorf("a dry run changed the manifest: %d exported", m.Counts.Exported)
	}
	acts, err := export.RemoveCopies(ctx, f.store, victim, false)
	if err != nil || len(acts) != 2 {
		t.Fatalf("RemoveCopies = %v, %v; want 2 copies removed", acts, err)
	}
	for layout, dir := range dirs {
		m := readManifest(t, dir)
		if m.Counts.Exported != 2 || len(m.Transcripts) != 2 {
			t.Errorf("%s manifest: %d exported, %d listed; want 2", layout, m.Counts.Exported, len(m.Transcripts))
		}
		for _, tr := range m.Transcripts {
			if tr.ID == victim {
				t.Errorf("%s manifest still lists %s", layout, victim)
			}
		}
		for _, a := range m.Archives {
			b, err := os.ReadFile(filepath.Join(dir, a.File))
			if err != nil || sum(b) != a.SHA256 || int64(len(b)) != a.Size || a.Count != 2 {
				t.Errorf("archive %s: %d bytes, sum ok %v, count %d, %v; want the manifest's, 2 entries", a.File, len(b), sum(b) == a.SHA256, a.Count, err)
			}
			zr, err := zip.OpenReader(filepath.Join(dir, a.File))
			if err != nil || len(zr.File) != 2 {
				t.Errorf("archive %s has %v entries (%v); want 2", a.File, zr, err)
			} else {
				zr.Close()
			}
		}
		entries, _ := os.ReadDir(dir)
		if layout == export.LayoutFiles && len(entries) != 3 { // two transcripts and the manifest
			t.Errorf("files layout folder has %d entries, want 3", len(entries))
		}
	}
	if again, err := export.RemoveCopies(ctx, f.store, victim, false); err != nil || len(again) != 0 {
		t.Errorf("RemoveCopies again = %v, %v; want nothing", again, err)
	}
}
