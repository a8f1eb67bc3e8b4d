package s3_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors/s3"
)

// latency is what every request to the slow server waits before it is served.
const latency = 20 * time.Millisecond

// counted is the requests a slow server served: listings, and the rest (per-object requests:
// HEAD, GET of an object).
type counted struct{ lists, perObject atomic.Int64 }

// startSlowServer is startServer with latency injected in front of every request, and the
// requests counted.
func startSlowServer(t testing.TB) (*server, *counted) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	n := &counted{}
	s3srv := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		if r.Method == http.MethodGet && r.URL.Query().Has("list-type") {
			n.lists.Add(1)
		} else {
			n.perObject.Add(1)
		}
		s3srv.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &server{backend: backend, url: srv.URL}, n
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

// peakHeap samples the heap in use until stop is called, and returns the peak seen.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		sample()
		return peak.Load()
	}
}

// TestDiscoveryAtScale lists S3_SCALE_OBJECTS objects (default 10,000) from gofakes3 with 20 ms
// added to every request, list-only (the default) and with metadata read by HEAD, and logs the
// time taken and the peak heap (client and in-process server together). It asserts what does
// not depend on the machine: every object is found, and a re-scan with the cursor returns
// nothing and makes no request per object, only the listing's pages.
//
// The figure for 100,000 objects: S3_SCALE_OBJECTS=100000 go test ./connectors/s3 -run
// DiscoveryAtScale -v -timeout 30m.
func TestDiscoveryAtScale(t *testing.T) {
	total := scaleObjects(t)
	s, n := startSlowServer(t)
	for i := range total {
		s.put(t, fmt.Sprintf("calls/%s/m-%06d.wav", []string{"ana", "bo", "cy"}[i%3], i), []byte(strconv.Itoa(i)),
			map[string]string{"X-Amz-Meta-Team": "sales"})
	}
	heads := min(total, 1000) // with metadata, HEAD per object: a smaller bucket in CI
	if os.Getenv("S3_SCALE_OBJECTS") != "" {
		heads = total
	}
	for _, tc := range []struct {
		name    string
		cfg     s3.Config
		objects int
	}{
		{"list-only", s3.Config{Prefix: "calls/", OwnerFrom: `key:^calls/([^/]+)/`}, total},
		{"metadata, head_concurrency 16", s3.Config{Prefix: "calls/", OwnerFrom: "meta:team"}, heads},
		{"metadata, head_concurrency 64", s3.Config{Prefix: "calls/", OwnerFrom: `key:^calls/([^/]+)/`, UserMetadata: true, HeadConcurrency: 64}, heads},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.objects < total {
				tc.cfg.MaxSize = int64(len(strconv.Itoa(tc.objects - 1)))
				tc.objects = 0
				for i := range total {
					if len(strconv.Itoa(i)) <= int(tc.cfg.MaxSize) {
						tc.objects++
					}
				}
			}
			discover(t, s, n, tc.cfg, tc.objects)
		})
	}
}

// discover lists everything with cfg, checks that want objects were found, then re-scans.
func discover(t *testing.T, s *server, n *counted, cfg s3.Config, want int) {
	src := s.source(t, cfg)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	n.lists.Store(0)
	n.perObject.Store(0)
	stop := peakHeap()
	start := time.Now()
	recs, cursor, err := src.List(context.Background(), "")
	took := time.Since(start)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after) // recs and the cursor still alive
	t.Logf("heap kept by the scan's result (recordings and cursor): %.1f MiB", float64(int64(after.HeapInuse)-int64(base.HeapInuse))/(1<<20))
	if len(recs) != want || recs[0].Owner == nil || (cfg.UserMetadata && recs[0].Fields["team"] != "sales") {
		t.Fatalf("first scan found %d recordings (first %+v), want %d with owners (and fields when metadata is on)", len(recs), recs[0], want)
	}
	t.Logf("first scan: %d objects in %v (%d listings, %d per-object requests), peak heap %.1f MiB (%.1f MiB before: the server's objects), cursor %d KB",
		len(recs), took.Round(time.Millisecond), n.lists.Load(), n.perObject.Load(), float64(peak)/(1<<20),
		float64(base.HeapInuse)/(1<<20), len(cursor)>>10)
	recs = nil
	n.lists.Store(0)
	n.perObject.Store(0)
	start = time.Now()
	again, _, err := src.List(context.Background(), cursor)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("re-scan: %d new in %v (%d listings, %d per-object requests)", len(again), time.Since(start).Round(time.Millisecond),
		n.lists.Load(), n.perObject.Load())
	if len(again) != 0 || n.perObject.Load() != 0 {
		t.Errorf("re-scan = %d recordings and %d per-object requests, want none", len(again), n.perObject.Load())
	}
}
