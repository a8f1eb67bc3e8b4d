package gdrive_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

// scaleFiles is how many files the discovery test lists: GDRIVE_SCALE_FILES, else 10,000
// (1,000 with -short).
func scaleFiles(t *testing.T) int {
	if v := os.Getenv("GDRIVE_SCALE_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("GDRIVE_SCALE_FILES=%q: %v", v, err)
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
	done, finished := make(chan struct{}), make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak.Store(max(peak.Load(), m.HeapInuse))
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

// TestDiscoveryAtScale lists GDRIVE_SCALE_FILES files (default 10,000) in a folder of the Drive
// fake with 20 ms added to every request, and logs the time taken and the peak heap (client
// and fake together). It asserts what does not depend on the machine: every file is found with
// its owner from the listing alone (no request per file), a re-scan through the changes feed
// returns nothing, and the periodic full pass makes no request per file either.
func TestDiscoveryAtScale(t *testing.T) {
	total := scaleFiles(t)
	fake := gdrivetest.Start(t)
	folder := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	owners := []string{sam, "kim@acme.test", "ana@acme.test"}
	for i := range total {
		fake.Put(fmt.Sprintf("m-%06d.wav", i), "audio/wav", folder, owners[i%3], "", []byte(strconv.Itoa(i)))
	}
	fake.Latency = 20 * time.Millisecond
	clock := time.Now()
	src := newSource(t, fake, gdrive.Config{FolderID: folder, Now: func() time.Time { return clock }})
	runtime.GC()
	stop := peakHeap()
	start := time.Now()
	recs, cursor := list(t, src, "")
	took, peak := time.Since(start), stop()
	requests, perFile := fake.Counts()
	t.Logf("first scan: %d files in %v (%d requests, %d per file), peak heap %.1f MiB, cursor %d bytes",
		len(recs), took.Round(time.Millisecond), requests, perFile, float64(peak)/(1<<20), len(cursor))
	if len(recs) != total || recs[0].Owner == nil || recs[0].Owner.Email == "" || perFile != 0 {
		t.Fatalf("first scan = %d recordings (first owner %+v), %d per-file requests; want %d with owners, none per file",
			len(recs), recs[0].Owner, perFile, total)
	}
	recs = nil
	start = time.Now()
	again, cursor := list(t, src, cursor)
	r2, p2 := fake.Counts()
	t.Logf("re-scan (changes feed): %d new in %v (%d requests, %d per file)", len(again), time.Since(start).Round(time.Millisecond), r2-requests, p2)
	if len(again) != 0 || p2 != 0 {
		t.Errorf("re-scan = %d recordings, %d per-file requests; want none", len(again), p2)
	}
	clock = clock.Add(2 * time.Hour) // past full_every: a full pass, listed again for the store to dedupe
	start = time.Now()
	full, _ := list(t, src, cursor)
	r3, p3 := fake.Counts()
	t.Logf("full pass: %d listed in %v (%d requests, %d per file)", len(full), time.Since(start).Round(time.Millisecond), r3-r2, p3)
	if p3 != 0 {
		t.Errorf("full pass made %d per-file requests, want none", p3)
	}
}
