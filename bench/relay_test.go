package bench

import (
	"context"
	"os"
	"testing"

	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestRelayWorkload runs the relay workload small and checks its figures are there and sane.
func TestRelayWorkload(t *testing.T) {
	rep, err := Relay(context.Background(), Env{Dir: t.TempDir(), Short: true, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, map[string]string{"relay_throughput": "deliveries/s", "relay_lag_p50": "ms", "relay_lag_p99": "ms", "relay_isolation_p99": "ms"})
	for _, r := range rep.Results {
		if r.Value <= 0 {
			t.Errorf("%s = %v, want > 0", r.Name, r.Value)
		}
	}
	if tp := rep.Results[0]; tp.Reference == nil || *tp.Reference <= 0 || tp.Ratio == nil {
		t.Errorf("relay_throughput has no bare-loop reference: %+v", tp)
	}
	if len(rep.Charts) != 2 || len(rep.Charts[0].Lines[0].Points) != 5 {
		t.Errorf("charts = %+v, want throughput against 5 windows and the lag chart", rep.Charts)
	}
}

// BenchmarkRelayDrain drains a backlog of 100,000 deliveries (5,000 jobs × 2 events × 10
// endpoints) and reports deliveries/s: the relay_throughput figure, for profiling. Run:
// go test ./bench -run '^$' -bench RelayDrain -benchtime 1x -cpuprofile cpu.out
func BenchmarkRelayDrain(b *testing.B) {
	jobs := 5000
	if testing.Short() {
		jobs = 250
	}
	rx := benchReceiver(b)
	defer sqlite.WriterProcs()() // as bridge run runs the relay on SQLite
	for range b.N {
		// The drain's log line (commits, CPU per delivery) goes to stderr, off benchstat's input.
		tp, batches, err := drain(context.Background(), Env{Dir: b.TempDir(), Log: os.Stderr}, rx, jobs, 2, relay.BusInFlight)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(tp, "deliveries/s")
		b.ReportMetric(float64(batches), "commits")
	}
}

// BenchmarkBareLoop runs the relay_throughput reference (100,000 POSTs to the same receiver)
// and reports POSTs/s, for profiling side by side with BenchmarkRelayDrain, at the GOMAXPROCS
// the process starts with (the reference's other run, at bridge run's: GOMAXPROCS=3 on 2 cores).
func BenchmarkBareLoop(b *testing.B) {
	n := 100000
	if testing.Short() {
		n = 5000
	}
	rx := benchReceiver(b)
	for range b.N {
		cpu := cpuTime()
		rate, err := bareLoop(context.Background(), rx, n, 4)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rate, "POSTs/s")
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(n), "µs-cpu/POST")
	}
}

// BenchmarkRelayRatio reports relay_throughput's ratio with its reference measured around it
// (bench relay's reference just before and just after the drain, averaged), which a noisy
// host's swings move less than either figure alone: for comparing changes, several runs each.
func BenchmarkRelayRatio(b *testing.B) {
	jobs, posts := 5000, 100000
	if testing.Short() {
		jobs, posts = 250, 5000
	}
	rx := benchReceiver(b)
	ctx := context.Background()
	env := Env{Dir: b.TempDir(), Log: os.Stderr}
	for range b.N {
		before, err := bareReference(ctx, env, rx, posts)
		if err != nil {
			b.Fatal(err)
		}
		undo := sqlite.WriterProcs()
		tp, _, err := drain(ctx, env, rx, jobs, 2, relay.BusInFlight)
		undo()
		if err != nil {
			b.Fatal(err)
		}
		after, err := bareReference(ctx, env, rx, posts)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(tp/((before+after)/2), "ratio")
		b.ReportMetric(tp, "deliveries/s")
	}
}

// benchReceiver starts a receiver for a benchmark, closed when it ends.
func benchReceiver(b *testing.B) *receiver {
	rx, err := newReceiver()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rx.close)
	return rx
}
