package export_test

import (
	"context"
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
