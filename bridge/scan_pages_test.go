package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

// pagedSource hands over pages of two recordings, each page's cursor naming it, and fails
// after failAfter pages (0: never). List is not used by a scan.
type pagedSource struct {
	pages, failAfter int
	// from is the cursor each ListPages started from.
	from []string
}

var errListing = errors.New("listing failed")

func (s *pagedSource) List(context.Context, string) ([]connectors.Recording, string, error) {
	return nil, "", errors.New("List called on a PageLister")
}

func (s *pagedSource) Open(context.Context, connectors.Recording) (io.ReadCloser, error) {
	return nil, errors.New("not opened")
}

func (s *pagedSource) ListPages(_ context.Context, cursor string, page func([]connectors.Recording, string) error) error {
	s.from = append(s.from, cursor)
	for i := range s.pages {
		if s.failAfter > 0 && i == s.failAfter {
			return errListing
		}
		recs := []connectors.Recording{{ItemID: fmt.Sprintf("p%d-a.wav", i), Version: "1", Name: "a.wav"},
			{ItemID: fmt.Sprintf("p%d-b.wav", i), Version: "1", Name: "b.wav"}}
		if err := page(recs, fmt.Sprintf("after-%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// TestScanStoresPageByPage: a source that lists in pages is stored a page at a time with each
// page's cursor, so a listing failing midway keeps the pages before, and the next scan starts
// from their cursor and stores the rest once.
func TestScanStoresPageByPage(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	src := &pagedSource{pages: 3, failAfter: 2}
	p := &bridge.Pipeline{Store: store, Instance: "test", Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "paged", Source: src}}}
	n, err := p.Scan(ctx, "inbox")
	if !errors.Is(err, errListing) || n != 4 {
		t.Fatalf("Scan failing after 2 pages = %d, %v; want 4 jobs and %v", n, err, errListing)
	}
	if c, err := store.Cursor(ctx, "inbox"); err != nil || c != "after-1" {
		t.Errorf("cursor after the failure = %q, %v; want after-1", c, err)
	}
	src.failAfter = 0
	if n, err := p.Scan(ctx, "inbox"); err != nil || n != 2 {
		t.Errorf("Scan again = %d, %v; want the 2 jobs of the last page", n, err)
	}
	if len(src.from) != 2 || src.from[1] != "after-1" {
		t.Errorf("listings started from %q; want \"\" then after-1", src.from)
	}
	if c, _ := store.Cursor(ctx, "inbox"); c != "after-2" {
		t.Errorf("cursor at the end = %q, want after-2", c)
	}
	jobs, err := store.Jobs(ctx, bridge.JobFilter{Source: "inbox"})
	if err != nil || len(jobs) != 6 {
		t.Errorf("jobs = %d, %v; want 6", len(jobs), err)
	}
}
