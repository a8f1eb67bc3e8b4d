package bridge_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/sandbox"
)

// BenchmarkTracker1000 follows 1,000 transcriptions in flight. It reports the requests one
// tracking poll costs while nothing changes (requests/poll, and per minute at the default 5 s
// poll), the GETs spent per finished transcription, and the detection lag from the moment the
// service finished a transcription to the moment its job was done, at a 1 s poll. Run:
// go test ./bridge -run '^$' -bench Tracker1000 -benchtime 1x
func BenchmarkTracker1000(b *testing.B) {
	n := benchN()
	for range b.N {
		// Requests per poll with n in flight on a plan processing 2 at a time: n-2 wait queued.
		e := inFlight(b, n, 2, 1000)
		ctx := context.Background()
		before := len(e.sb.Journal(b))
		if err := e.p.Track(ctx); err != nil { // the first poll also lists queued ones
			b.Fatal(err)
		}
		first := len(e.sb.Journal(b)) - before
		before = len(e.sb.Journal(b))
		start := time.Now()
		if err := e.p.Track(ctx); err != nil {
			b.Fatal(err)
		}
		pollTime := time.Since(start)
		perPoll := len(e.sb.Journal(b)) - before // the journal itself is not an API request
		b.ReportMetric(float64(first), "requests/full-poll")
		b.ReportMetric(float64(perPoll), "requests/poll")
		b.ReportMetric(float64(perPoll)*12+float64(first)/10, "requests/min@5s")
		b.ReportMetric(float64(pollTime.Microseconds())/1000, "ms/poll")

		// Detection lag with all n finishing within seconds, at a 1 s poll.
		e = inFlight(b, n, n, 1)
		before = len(e.sb.Journal(b))
		runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		if err := e.p.Run(runCtx, bridge.RunOptions{Once: true, StepInterval: 50 * time.Millisecond, PollInterval: time.Second}); err != nil {
			b.Fatal(err)
		}
		cancel()
		gets := 0
		for _, en := range e.sb.Journal(b)[before:] {
			if en.Method == "GET" && len(en.Path) > len(sandbox.BasePath+"/transcriptions/") {
				gets++
			}
		}
		b.ReportMetric(float64(gets)/float64(n), "GETs/transcription")
		lags := detectionLags(b, e)
		b.ReportMetric(float64(lags[len(lags)/2].Milliseconds()), "p50-lag-ms")
		b.ReportMetric(float64(lags[len(lags)*99/100].Milliseconds()), "p99-lag-ms")
	}
}

// inFlight uploads n two-second files through the pipeline to a sandbox processing concurrency
// files at once at timeScale, and returns once all n are queued or processing.
func inFlight(b *testing.B, n, concurrency int, timeScale float64) *env {
	e := newEnv(b, nil, func(o *sandbox.Options) {
		o.TimeScale = timeScale
		o.Seed.Workspaces[0].BalanceMinutes = 10000
		o.Seed.Workspaces[0].Limits.Concurrency = concurrency
		o.Seed.Workspaces[0].Limits.MaxQueuedFiles = 2 * n
		o.Logf = func(string, ...any) {}
	})
	ctx := context.Background()
	for i := range n {
		e.put(b, fmt.Sprintf("f%04d.wav", i), wav(2, uint64(i)))
	}
	e.p.Scan(ctx, "inbox")
	for {
		e.p.MapDiscovered(ctx)
		var wg sync.WaitGroup
		e.p.StartUploads(ctx, &wg)
		wg.Wait()
		counts, _ := e.store.Counts(ctx)
		if counts[bridge.StateQueued]+counts[bridge.StateProcessing] == n {
			return e
		}
		if counts[bridge.StateReady]+counts[bridge.StateUploading]+counts[bridge.StateDiscovered] == 0 {
			b.Fatalf("uploads ended with %v", counts)
		}
	}
}

// detectionLags returns, sorted, how long after the service finished each transcription its
// job was done.
func detectionLags(b *testing.B, e *env) []time.Duration {
	ctx := context.Background()
	finished := map[string]time.Time{}
	for it, err := range e.api.All(ctx, api.ListParams{}) {
		if err != nil {
			b.Fatal(err)
		}
		finished[it.ID] = it.UpdatedAt
	}
	jobs, _ := e.store.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateDone}})
	var lags []time.Duration
	for _, j := range jobs {
		if t, ok := finished[j.TranscriptionID]; ok {
			lags = append(lags, j.UpdatedAt.Sub(t))
		}
	}
	if len(lags) == 0 {
		b.Fatal("no job finished")
	}
	sort.Slice(lags, func(i, k int) bool { return lags[i] < lags[k] })
	return lags
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
				e := inFlight(b, n, 2, 1000)
				ps := []*bridge.Pipeline{e.p}
				for i := 1; i < replicas; i++ {
					ps = append(ps, e.replica(b, fmt.Sprint("r", i)))
				}
				ctx := context.Background()
				before := len(e.sb.Journal(b))
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
				b.ReportMetric(float64(len(e.sb.Journal(b))-before), "requests/min@5s")
			}
		})
	}
}
