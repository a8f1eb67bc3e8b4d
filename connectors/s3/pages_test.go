package s3_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/s3"
)

// page is one call of ListPages' page function.
type page struct {
	recs   []connectors.Recording
	cursor string
}

// listPages calls ListPages from cursor, keeping every page handed over, and stops it with
// errStop after stop pages (0: never).
func listPages(t *testing.T, src *s3.Source, cursor string, stop int) ([]page, error) {
	t.Helper()
	var pages []page
	err := src.ListPages(context.Background(), cursor, func(recs []connectors.Recording, c string) error {
		if len(recs) > 1000 {
			t.Errorf("a page of %d recordings, want at most 1000", len(recs))
		}
		pages = append(pages, page{recs, c})
		if len(pages) == stop {
			return errStop
		}
		return nil
	})
	return pages, err
}

var errStop = errors.New("stopped")

// TestListPagesResumesMidway: a listing stopped after two pages (as a scan that crashed) resumes
// from the cursor of the last page handed over, handing over the rest and nothing again; the
// last cursor drops a key deleted meanwhile, and a re-listing hands over one empty page.
func TestListPagesResumesMidway(t *testing.T) {
	s := startServer(t, s3mem.New())
	for i := range 3500 {
		s.put(t, fmt.Sprintf("calls/m-%05d.wav", i), []byte{byte(i), byte(i >> 8)}, nil)
	}
	src := s.source(t, s3.Config{Prefix: "calls/"})
	s3.SetSaveEvery(src, 0)
	first, err := listPages(t, src, "", 2)
	if !errors.Is(err, errStop) || len(first) != 2 {
		t.Fatalf("ListPages stopped after 2 pages = %d pages, %v; want 2, %v", len(first), err, errStop)
	}
	got := map[string]int{}
	for _, p := range first {
		for _, r := range p.recs {
			got[r.ItemID]++
		}
	}
	if len(got) != 2000 {
		t.Fatalf("first two pages = %d recordings, want 2000", len(got))
	}
	if _, err := s.backend.DeleteObject(bucket, "calls/m-00007.wav"); err != nil {
		t.Fatal(err)
	}
	rest, err := listPages(t, src, first[1].cursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rest {
		for _, r := range p.recs {
			got[r.ItemID]++
		}
	}
	for k, n := range got {
		if n != 1 {
			t.Errorf("%s handed over %d times, want once", k, n)
		}
	}
	if len(got) != 3500 {
		t.Errorf("%d objects handed over in all, want 3500", len(got))
	}
	final := rest[len(rest)-1].cursor
	if recs, _ := list(t, src, final); len(recs) != 0 {
		t.Errorf("listing from the last cursor = %d recordings, want 0", len(recs))
	}
	again, err := listPages(t, src, final, 0)
	if err != nil || len(again) != 1 || len(again[0].recs) != 0 {
		t.Errorf("re-listing = %d pages, %v; want one empty page", len(again), err)
	}
	s.put(t, "calls/m-00007.wav", []byte{7, 0}, nil) // the same object again: it left the cursor
	if recs, _ := list(t, src, final); len(recs) != 1 || recs[0].ItemID != "calls/m-00007.wav" {
		t.Errorf("after a deleted key came back, listed %v; want calls/m-00007.wav", recs)
	}
}

// TestListPagesMatchesList: without a cursor saved midway (the default interval), every page
// carries the cursor it started from but the last, which carries List's.
func TestListPagesMatchesList(t *testing.T) {
	s := startServer(t, s3mem.New())
	for i := range 2500 {
		s.put(t, fmt.Sprintf("calls/m-%05d.wav", i), []byte{byte(i), byte(i >> 8)}, nil)
	}
	src := s.source(t, s3.Config{Prefix: "calls/"})
	recs, want := list(t, src, "")
	pages, err := listPages(t, src, "", 0)
	if err != nil || len(pages) != 3 {
		t.Fatalf("ListPages = %d pages, %v; want 3", len(pages), err)
	}
	n := 0
	for i, p := range pages {
		n += len(p.recs)
		if last := i == len(pages)-1; last && p.cursor != want || !last && p.cursor != "" {
			t.Errorf("page %d carries cursor %.20q…, want %.20q…", i, p.cursor, map[bool]string{true: want}[last])
		}
	}
	if n != len(recs) || n != 2500 {
		t.Errorf("ListPages handed over %d recordings, List %d; want 2500", n, len(recs))
	}
}
