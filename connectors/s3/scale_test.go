package s3_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bench"
	"github.com/transcript-bridge/bridge/connectors/s3"
)

// startSlowServer is startServer over the bench's S3 fake: gofakes3 on a bolt file, with
// bench.DiscoveryLatency injected in front of every request and the requests counted.
func startSlowServer(t testing.TB) (*server, *bench.S3Fake) {
	t.Helper()
	fake, err := bench.StartS3Fake(filepath.Join(t.TempDir(), "bucket.bolt"), bench.DiscoveryLatency)
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
// added to every request: list-only (the default) through the bench's discovery workload (the
// pipeline into a store, beside a bare ListObjectsV2 loop), then with metadata read by HEAD. It
// asserts what does not depend on the machine: every object is found, and a re-scan with the
// cursor returns nothing and makes no request per object, only the listing's pages.
//
// The figures for 100,000 objects: bridge bench discovery.
func TestDiscoveryAtScale(t *testing.T) {
	total := scaleObjects(t)
	t.Run("list-only", func(t *testing.T) {
		results, err := bench.S3Discovery(context.Background(), bench.Env{Dir: t.TempDir(), Log: io.Discard}, total)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			t.Logf("%s = %.3g %s (goal %s)", r.Name, r.Value, r.Unit, r.Goal)
			if (r.Name == "s3_rescan_queued" || r.Name == "s3_rescan_object_requests") && r.Value != 0 {
				t.Errorf("%s = %v, want 0", r.Name, r.Value)
			}
		}
	})
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
func discover(t *testing.T, s *server, n *bench.S3Fake, cfg s3.Config, want int) {
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
