package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// Relay is the relay workload (bridge bench relay), on the embedded SQLite default with
// relayEndpoints endpoints on a loopback receiver answering at once, ~1 KB payloads:
//   - relay_throughput: a backlog of events committed, then drained; deliveries/s from the
//     relay's start to the commit of the last "delivered" record, beside the bare loop (the
//     same number of POSTs of a like body, same client and concurrency, no store), the better
//     of its runs at Go's default GOMAXPROCS and at bridge run's (the relay runs at the latter,
//     as bridge run does on SQLite: sqlite.WriterProcs);
//   - relay_lag_p50/p99: events committed at a steady rate, half of the throughput measured,
//     two per state change (its own transaction), as the drain's; commit→receipt at the receiver;
//   - relay_isolation_p99: the same with one endpoint timing out (10 s), the nine others' p99
//     beside the p99 of the no-fault run just before it (the median of three such pairs);
//   - the chart: throughput against the bus window (fan-outs per group commit), and lag
//     percentiles against the offered rate.
//
// It fails when a run cannot be set up or does not finish in 10 minutes.
func Relay(ctx context.Context, env Env) (*Report, error) {
	o := &env.Relay
	o.Store, o.Bus, o.Replicas = cmp.Or(o.Store, "sqlite"), cmp.Or(o.Bus, "sql"), max(o.Replicas, 1)
	o.DSN, o.NATSURL = envOr(o.DSN, "BRIDGE_TEST_POSTGRES_DSN"), envOr(o.NATSURL, "BRIDGE_TEST_NATS_URL")
	switch {
	case o.Store == "postgres" && (o.Bus == "sql" || o.Bus == "nats"):
		return relayScale(ctx, env)
	case o.Store != "sqlite" && o.Store != "postgres":
		return nil, fmt.Errorf("bench relay: --store %q is not sqlite or postgres", o.Store)
	case o.Bus != "sql" && o.Bus != "nats":
		return nil, fmt.Errorf("bench relay: --bus %q is not sql or nats", o.Bus)
	case o.Bus != "sql" || o.Replicas != 1:
		return nil, fmt.Errorf("bench relay: --bus nats and --replicas above 1 need --store postgres")
	}
	jobs, perJob, paced := 5000, 2, 5*time.Second
	if env.Short {
		jobs, perJob, paced = 150, 2, time.Second
	}
	rx, err := newReceiver()
	if err != nil {
		return nil, err
	}
	defer rx.close()
	n := jobs * perJob * relayEndpoints
	env.Logf("bench relay: %d deliveries (%d jobs × %d events × %d endpoints)", n, jobs, perJob, relayEndpoints)
	undo := sqlite.WriterProcs() // the relay runs as bridge run runs it on SQLite
	tp, batches, err := drain(ctx, env, rx, jobs, perJob, relay.BusInFlight)
	undo()
	if err != nil {
		return nil, fmt.Errorf("bench relay: %w", err)
	}
	env.Logf("bench relay: %.0f deliveries/s in %d group commits", tp, batches)
	bare, err := bareReference(ctx, env, rx, n)
	if err != nil {
		return nil, fmt.Errorf("bench relay: %w", err)
	}
	rep := &Report{Results: []Result{
		Goal{MinRatio: Ref(0.5), MinValue: Ref(10000)}.Figure("relay_throughput", tp, "deliveries/s", Ref(bare), "bare net/http POST loop"),
	}}

	defer sqlite.WriterProcs()()
	chart, err := windowChart(ctx, env, rx, jobs/4, perJob, bare)
	if err != nil {
		return nil, err
	}
	rep.Charts = append(rep.Charts, chart)

	lags, lagChart, err := lagFigures(ctx, env, rx, tp, paced)
	if err != nil {
		return nil, err
	}
	rep.Results = append(rep.Results, lags...)
	rep.Charts = append(rep.Charts, lagChart)
	return rep, nil
}

// bareReference runs the bare loop at Go's default GOMAXPROCS and at the one bridge run sets
// for SQLite (sqlite.WriterProcs), and returns the better POSTs/s: the bridge's setting can
// only raise the reference, never slow it.
func bareReference(ctx context.Context, env Env, rx *receiver, n int) (float64, error) {
	var best float64
	for i, procs := range []string{"Go's default", "bridge run's"} {
		undo := func() {}
		if i == 1 {
			undo = sqlite.WriterProcs()
		}
		start, cpu, gomaxprocs := time.Now(), cpuTime(), runtime.GOMAXPROCS(0)
		rate, err := bareLoop(ctx, rx, n, 4)
		took, used := time.Since(start), cpuTime()-cpu
		undo()
		if err != nil {
			return 0, err
		}
		env.Logf("bench relay: bare loop %.0f POSTs/s at %s GOMAXPROCS (%d); %s", rate, procs, gomaxprocs, perItem(used, took, n, "POST"))
		best = max(best, rate)
	}
	return best, nil
}

// lagFigures measures the lag at steady rates (a quarter, three quarters and half of tp, in
// that order, the chart), half of tp being the figure (the better p99 of its three no-fault
// runs); then isolation: one endpoint timing out, each such run paired with the no-fault run
// just before it (the first pair's is the chart's last), three pairs. The pair of median ratio
// is the figure: a pair's runs are a few seconds apart, so a host's drift moves both alike,
// and one noisy pair does not decide it.
func lagFigures(ctx context.Context, env Env, rx *receiver, tp float64, paced time.Duration) ([]Result, Chart, error) {
	lagChart := Chart{Title: "Commit-to-receipt lag against offered rate (two events per transaction)", XLabel: "offered deliveries/s", YLabel: "lag (ms)",
		Lines: []Line{{Name: "p50"}, {Name: "p90"}, {Name: "p99"}}}
	var half pacedResult
	for _, f := range []float64{0.25, 0.75, 0.5} { // half last: the first isolation pair's
		res, err := pacedRun(ctx, env, rx, tp*f, paced)
		if err != nil {
			return nil, Chart{}, fmt.Errorf("bench relay: paced at %.0f/s: %w", tp*f, err)
		}
		env.Logf("bench relay: offered %.0f/s: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms", res.offered, res.p50, res.p90, res.p99)
		for i, v := range []float64{res.p50, res.p90, res.p99} {
			lagChart.Lines[i].Points = append(lagChart.Lines[i].Points, Point{res.offered, v})
		}
		if f == 0.5 {
			half = res
		}
	}
	for i := range lagChart.Lines {
		slices.SortFunc(lagChart.Lines[i].Points, func(a, b Point) int { return cmp.Compare(a.X, b.X) })
	}
	pairs, err := isolationPairs(ctx, env, rx, tp*0.5, paced, half)
	if err != nil {
		return nil, Chart{}, err
	}
	for _, p := range pairs {
		if p[0].p99 < half.p99 {
			half = p[0]
		}
	}
	slices.SortFunc(pairs, func(a, b [2]pacedResult) int { return cmp.Compare(a[1].p99/a[0].p99, b[1].p99/b[0].p99) })
	iso := pairs[len(pairs)/2]
	return []Result{
		Goal{MaxValue: Ref(20)}.Figure("relay_lag_p50", half.p50, "ms", nil, ""),
		Goal{MaxValue: Ref(250)}.Figure("relay_lag_p99", half.p99, "ms", nil, ""),
		Goal{MaxRatio: Ref(1.1)}.Figure("relay_isolation_p99", iso[1].p99, "ms", Ref(iso[0].p99), "no-fault p99, same pair"),
	}, lagChart, nil
}

// isolationPairs runs three pairs at rate: a no-fault run (the first pair's is first, given)
// and then one with crm0 timing out. Each pair is {no fault, fault}.
func isolationPairs(ctx context.Context, env Env, rx *receiver, rate float64, paced time.Duration, first pacedResult) ([][2]pacedResult, error) {
	var pairs [][2]pacedResult
	for round := range 3 {
		clean := first
		if round > 0 {
			var err error
			if clean, err = pacedRun(ctx, env, rx, rate, paced); err != nil {
				return nil, fmt.Errorf("bench relay: paced at %.0f/s: %w", rate, err)
			}
			env.Logf("bench relay: offered %.0f/s again: p50 %.1f ms, p99 %.1f ms", clean.offered, clean.p50, clean.p99)
		}
		fault, err := pacedRun(ctx, env, rx, rate, paced, "/crm0")
		if err != nil {
			return nil, fmt.Errorf("bench relay: one endpoint timing out: %w", err)
		}
		env.Logf("bench relay: crm0 timing out: the others' p50 %.1f ms, p99 %.1f ms (%.2f× the run before)", fault.p50, fault.p99, fault.p99/clean.p99)
		pairs = append(pairs, [2]pacedResult{clean, fault})
	}
	return pairs, nil
}

// windowChart measures the throughput against the bus window (how many events one group
// commit may fan out), beside the bare loop's figure.
func windowChart(ctx context.Context, env Env, rx *receiver, jobs, perJob int, bare float64) (Chart, error) {
	windows := []int{1, 8, 32, 64, relay.BusInFlight}
	line, bareLine := Line{Name: "relay"}, Line{Name: "bare loop"}
	for _, w := range windows {
		t, _, err := drain(ctx, env, rx, jobs, perJob, w)
		if err != nil {
			return Chart{}, fmt.Errorf("bench relay: window %d: %w", w, err)
		}
		env.Logf("bench relay: window %d: %.0f deliveries/s", w, t)
		line.Points = append(line.Points, Point{float64(w), t})
		bareLine.Points = append(bareLine.Points, Point{float64(w), bare})
	}
	return Chart{Title: fmt.Sprintf("Relay throughput against batch size (%d endpoints, SQLite, %d cores)", relayEndpoints, runtime.NumCPU()),
		XLabel: "events fanned out per group commit at most (bus window)", YLabel: "deliveries/s", LogX: true, Lines: []Line{line, bareLine}}, nil
}

// pacedResult is one steady-rate run: what was offered and the lag percentiles (ms).
type pacedResult struct {
	offered, p50, p90, p99 float64
}

// The paced runs' producers: pacedProducers goroutines taking turns at the jobs, each state
// change committing pacedPerJob events in its own transaction, as the drain's do. One
// producer of one event a transaction, waiting on each commit's fsync behind the relay's,
// offered at most about 8,700 deliveries/s on the 2-core machine, well below half the
// throughput; two of two reach it.
const (
	pacedPerJob    = 2
	pacedProducers = 2
)

// pacedRun commits events pacedPerJob per transaction at rate deliveries/s (rate/relayEndpoints
// events/s) for d while the relay runs, and returns the lags, from each transaction's commit
// to each message's receipt, of the healthy endpoints (all but slow) after the first fifth of
// d (warm-up).
func pacedRun(ctx context.Context, env Env, rx *receiver, rate float64, d time.Duration, slow ...string) (pacedResult, error) {
	dir, err := os.MkdirTemp(env.Dir, "paced-")
	if err != nil {
		return pacedResult{}, fmt.Errorf("scratch directory: %w", err)
	}
	jobs := int(rate / relayEndpoints / pacedPerJob * d.Seconds())
	s, err := newRelaySetup(ctx, dir, rx, max(jobs, 1), relay.BusInFlight)
	if err != nil {
		return pacedResult{}, err
	}
	defer s.close()
	rx.reset(slow...)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.relay.Run(rctx, time.Second) }()
	defer func() { cancel(); <-done }()
	start := time.Now()
	every := time.Duration(float64(time.Second) * relayEndpoints * pacedPerJob / rate)
	warmed := time.AfterFunc(d/5, func() { rx.reset(slow...) }) // the warm-up's lags are dropped
	defer warmed.Stop()
	var wg sync.WaitGroup
	errs := make(chan error, pacedProducers)
	pctx, stop := context.WithCancel(ctx) // the first producer to fail stops the others
	defer stop()
	committed := make([]time.Time, len(s.jobs)) // each job's commit, written by its producer only
	for p := range pacedProducers {
		wg.Go(func() {
			for i := p; i < len(s.jobs) && pctx.Err() == nil; i += pacedProducers {
				if at := start.Add(time.Duration(i) * every); time.Until(at) > 0 {
					time.Sleep(time.Until(at))
				}
				if err := s.emit(pctx, &s.jobs[i], pacedPerJob); err != nil {
					errs <- fmt.Errorf("emit: %w", err)
					stop()
					return
				}
				committed[i] = time.Now()
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return pacedResult{}, err
	default:
		if err := ctx.Err(); err != nil {
			return pacedResult{}, err
		}
	}
	offered := float64(len(s.jobs)*pacedPerJob*relayEndpoints) / time.Since(start).Seconds()
	time.Sleep(300 * time.Millisecond) // the last events' deliveries
	return pacedResult{offered: offered}.lagsOf(rx.taken(slow...), s.jobs, committed), nil
}

// lagsOf sets r's percentiles from the receipts: each message's lag from its job's commit
// (committed, by index in jobs) to its receipt. A receipt may come a moment before the
// producer's clock reads the commit (the relay is woken by it): that lag counts as 0.
func (r pacedResult) lagsOf(receipts []receipt, jobs []bridge.Job, committed []time.Time) pacedResult {
	at := make(map[string]time.Time, len(jobs))
	for i := range jobs {
		at[jobs[i].ID] = committed[i]
	}
	lags := make([]time.Duration, 0, len(receipts))
	for _, m := range receipts {
		if c, ok := at[m.job]; ok {
			lags = append(lags, max(m.at.Sub(c), 0))
		}
	}
	r.p50, r.p90, r.p99 = percentile(lags, 50), percentile(lags, 90), percentile(lags, 99)
	return r
}
