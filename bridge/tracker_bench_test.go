package bridge_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/transcript-bridge/bridge/bench"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// BenchmarkTracker1000 follows 1,000 transcriptions in flight through the bench's tracking
// workload (bench.MeasureTracking; bridge bench tracking prints its figures). It reports the
// requests one tracking poll costs while nothing changes (requests/poll, and per minute at the
// default 5 s poll), the GETs spent per finished transcription, and the detection lag from the
// moment the service finished a transcription to the moment its job was done, at that poll. Run:
// go test ./bridge -run '^$' -bench Tracker1000 -benchtime 1x
func BenchmarkTracker1000(b *testing.B) {
	n := benchN()
	for range b.N {
		s, err := bench.MeasureTracking(context.Background(), bench.Env{Dir: b.TempDir(), Log: io.Discard}, n, bench.TrackingPoll)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.FullPoll), "requests/full-poll")
		b.ReportMetric(float64(s.Poll), "requests/poll")
		b.ReportMetric(s.PerMinute, "requests/min@5s")
		b.ReportMetric(float64(s.PollTime.Microseconds())/1000, "ms/poll")
		b.ReportMetric(s.GETsPerTranscription, "GETs/transcription")
		b.ReportMetric(float64(s.Lag(0.50).Milliseconds()), "p50-lag-ms")
		b.ReportMetric(float64(s.Lag(0.95).Milliseconds()), "p95-lag-ms")
		b.ReportMetric(float64(s.Lag(0.99).Milliseconds()), "p99-lag-ms")
	}
}

// benchN is 1000 unless BENCH_N says otherwise (for a quick look), or 100 under -short (CI's
// one pass that keeps the benchmarks from rotting).
func benchN() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 100
	}
	return 1000
}

// BenchmarkTrackerReplicas follows 1,000 transcriptions in flight with 1 and with 3 replicas on
// one store, each stepping with tracking at every poll, and reports the API requests per minute
// at the default 5 s poll: one replica holds the tracker lease, so 3 cost what 1 does. Run:
// go test ./bridge -run '^$' -bench TrackerReplicas -benchtime 1x
func BenchmarkTrackerReplicas(b *testing.B) {
	n := benchN()
	const polls = 12 // one minute at 5 s
	for _, replicas := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			for range b.N {
				ctx := context.Background()
				f, err := bench.StartInFlight(ctx, b.TempDir(), n, 2, 1000)
				if err != nil {
					b.Fatal(err)
				}
				ps := []*bridge.Pipeline{f.Pipeline}
				for i := 1; i < replicas; i++ {
					ps = append(ps, replicaOf(b, f, fmt.Sprint("r", i)))
				}
				before, _ := f.Requests()
				for range polls {
					var wg sync.WaitGroup
					for _, p := range ps {
						wg.Go(func() {
							var uploads sync.WaitGroup
							if err := p.Step(ctx, &uploads, true); err != nil {
								b.Error(err)
							}
							uploads.Wait()
						})
					}
					wg.Wait()
				}
				after, _ := f.Requests()
				b.ReportMetric(float64(after-before), "requests/min@5s")
				f.Close()
			}
		})
	}
}

// replicaOf returns another pipeline like f's, on its own handle of f's database: another
// process sharing the store.
func replicaOf(b *testing.B, f *bench.InFlight, name string) *bridge.Pipeline {
	store, err := sqlite.Open(context.Background(), f.DBPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	p := f.Pipeline
	return &bridge.Pipeline{Store: store, API: p.API, Instance: p.Instance, Sources: p.Sources, UploadConcurrency: p.UploadConcurrency,
		Replica: name, Lease: p.Lease, Log: p.Log}
}
