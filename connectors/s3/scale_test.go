package s3_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/connectors/s3/s3test"
)

// startSlowServer is startServer over s3test's fake: gofakes3 on a bolt file, with 20 ms
// injected in front of every request (as bridge bench discovery) and the requests counted.
func startSlowServer(t testing.TB) (*server, *s3test.Fake) {
	t.Helper()
	fake, err := s3test.Start(filepath.Join(t.TempDir(), "bucket.bolt"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return &server{backend: fake.Backend, url: fake.URL}, fake
}

// scaleObjects is how many objects the discovery test lists: S3_SCALE_OBJECTS, else 10,000
// (1,000 with -short).
func scaleObjects(t testing.TB) int {
	if v := os.Getenv("S3_SCALE_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("S3_SCALE_OBJECTS=%q: %v", v, err)
		}
		return n
	}
	if testing.Short() {
		return 1000
	}
	return 10000
}

// TestDiscoveryAtScale lists S3_SCALE_OBJECTS objects (default 10,000) from gofakes3 with 20 ms
// added to every request, with metadata read by HEAD (bounded by head_concurrency). It asserts
// what does not depend on the machine: every object is found, and a re-scan with the cursor
// returns nothing and makes no request per object, only the listing's pages.
//
// The list-only scan of 100,000 objects through the pipeline, beside a bare ListObjectsV2 loop:
// bridge bench discovery (bench.S3Discovery, tested in package bench).
func TestDiscoveryAtScale(t *testing.T) {
	total := scaleObjects(t)
	s, fake := startSlowServer(t)
	heads := min(total, 1000) // with metadata, HEAD per object: a smaller bucket in CI
	if os.Getenv("S3_SCALE_OBJECTS") != "" {
		heads = total
	}
	if err := fake.Fill(context.Background(), total); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  s3.Config
	}{
		{"metadata, head_concurrency 16", s3.Config{Prefix: "calls/", OwnerFrom: "meta:team"}},
		{"metadata, head_concurrency 64", s3.Config{Prefix: "calls/", OwnerFrom: `key:^calls/([^/]+)/`, UserMetadata: true, HeadConcurrency: 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Objects hold their index in decimal: a size bound keeps the first heads of them.
			tc.cfg.MaxSize = int64(len(strconv.Itoa(heads - 1)))
			want := 0
			for i := range total {
				if len(strconv.Itoa(i)) <= int(tc.cfg.MaxSize) {
					want++
				}
			}
			discover(t, s, fake, tc.cfg, want)
		})
	}
}

// discover lists everything with cfg, checks that want objects were found, then re-scans.
func discover(t *testing.T, s *server, n *s3test.Fake, cfg s3.Config, want int) {
	src := s.source(t, cfg)
	n.Lists.Store(0)
	n.PerObject.Store(0)
	start := time.Now()
	recs, cursor, err := src.List(context.Background(), "")
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != want || recs[0].Owner == nil || (cfg.UserMetadata && recs[0].Fields["team"] != "sales") {
		t.Fatalf("first scan found %d recordings (first %+v), want %d with owners (and fields when metadata is on)", len(recs), recs[0], want)
	}
	t.Logf("first scan: %d objects in %v (%d listings, %d per-object requests), cursor %d KB",
		len(recs), took.Round(time.Millisecond), n.Lists.Load(), n.PerObject.Load(), len(cursor)>>10)
	n.Lists.Store(0)
	n.PerObject.Store(0)
	start = time.Now()
	again, _, err := src.List(context.Background(), cursor)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("re-scan: %d new in %v (%d listings, %d per-object requests)", len(again), time.Since(start).Round(time.Millisecond),
		n.Lists.Load(), n.PerObject.Load())
	if len(again) != 0 || n.PerObject.Load() != 0 {
		t.Errorf("re-scan = %d recordings and %d per-object requests, want none", len(again), n.PerObject.Load())
	}
}
