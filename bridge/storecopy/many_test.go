package storecopy

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// TestCopyManyJobs: 100,000 jobs (with their history) go from SQLite to PostgreSQL in constant
// memory: the rows are streamed and written in batches, never all held, so the heap stays far
// below what the jobs weigh (their rows, scanned and kept, hold 130 MB of heap).
func TestCopyManyJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("copies 100,000 jobs")
	}
	const jobs, chunk = 100_000, 5_000
	ctx := context.Background()
	from, to := openSQLite(t, "many.db"), openPostgres(t)
	start := time.Now()
	for i := 0; i < jobs; i += chunk {
		recs := make([]connectors.Recording, chunk)
		for k := range recs {
			n := i + k
			recs[k] = connectors.Recording{ItemID: fmt.Sprintf("rec/%06d.wav", n), Version: "v1", Name: fmt.Sprintf("%06d.wav", n),
				Size: int64(n), ModTime: t0, Link: "https://example.test/recordings/" + fmt.Sprint(n),
				Metadata: map[string]string{"topic": "weekly sync of the team, recorded", "host": "sam@acme.test"}}
		}
		_, err := from.Store().AddRecordings(ctx, "inbox", recs, fmt.Sprint(i), t0.Add(time.Duration(i)))
		must(t, err)
	}
	t.Logf("populated %d jobs in %v", jobs, time.Since(start).Round(time.Millisecond))

	var peak atomic.Uint64
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
			}
		}
	}()
	start = time.Now()
	report, err := Copy(ctx, from, to, Options{})
	close(done)
	must(t, err)
	took := time.Since(start)
	grew := int64(peak.Load()) - int64(base)
	t.Logf("copied and verified %d jobs and %d history rows in %v; heap grew by at most %.1f MB",
		report.Tables[3].Rows, report.Tables[4].Rows, took.Round(time.Millisecond), float64(grew)/(1<<20))
	if report.Tables[3].Table != "jobs" || report.Tables[3].Rows != jobs {
		t.Errorf("report: %+v, want %d jobs", report.Tables[3], jobs)
	}
	if grew > 40<<20 {
		t.Errorf("the heap grew by %d MB during the copy, want under 40 MB: rows held in memory", grew>>20)
	}
}
