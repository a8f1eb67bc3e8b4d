package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// relayScale is bench relay on PostgreSQL (--store postgres), with the store's bus or NATS
// JetStream (--bus), one replica or several (--replicas), the same receiver and bare loop as on
// SQLite, in the same run:
//   - relay_throughput: a backlog drained by all replicas together, deliveries/s, beside the
//     bare loop (goals: ≥ 5,000 deliveries/s and ≥ 0.25× the loop);
//   - relay_cpu_per_delivery: this process's CPU (relays and receiver) per delivery, and
//     relay_server_cpu_per_delivery the PostgreSQL and NATS servers' (every process of theirs
//     on this machine, other users' work included);
//   - with several replicas, relay_replica<N>_throughput, each one's share, and relay_scaling:
//     the aggregate beside one replica's, drained just before on the same servers (goal ≥ 0.9);
//   - relay_lag_p50/p99: commit→receipt at half the throughput, two events per transaction.
func relayScale(ctx context.Context, env Env) (*Report, error) {
	o := env.Relay
	jobs, perJob, paced := 5000, 2, 5*time.Second
	if env.Short {
		jobs, perJob, paced = 150, 2, 2*time.Second
	}
	rx, err := newReceiver()
	if err != nil {
		return nil, err
	}
	defer rx.close()
	n := jobs * perJob * relayEndpoints
	bus := o.Bus
	if bus == "nats" {
		bus += fmt.Sprintf(" (max_in_flight %d)", cmp.Or(o.NATSMaxInFlight, natsbus.DefaultMaxInFlight))
	}
	env.Logf("bench relay: PostgreSQL, bus %s, %d replica(s): %d deliveries (%d jobs × %d events × %d endpoints)", bus, o.Replicas, n, jobs, perJob, relayEndpoints)
	var one *scaleResult
	if o.Replicas > 1 {
		single := o
		single.Replicas, single.CPUProfile = 1, ""
		if one, err = scaleDrain(ctx, env, single, rx, jobs, perJob); err != nil {
			return nil, fmt.Errorf("bench relay: one replica: %w", err)
		}
	}
	res, err := scaleDrain(ctx, env, o, rx, jobs, perJob)
	if err != nil {
		return nil, fmt.Errorf("bench relay: %w", err)
	}
	start, cpu := time.Now(), cpuTime()
	bare, err := bareLoop(ctx, rx, n, 4)
	if err != nil {
		return nil, fmt.Errorf("bench relay: bare loop: %w", err)
	}
	env.Logf("bench relay: bare loop %.0f POSTs/s; %s", bare, perItem(cpuTime()-cpu, time.Since(start), n, "POST"))
	results := []Result{
		Goal{MinRatio: Ref(0.25), MinValue: Ref(5000)}.Figure("relay_throughput", res.rate, "deliveries/s", Ref(bare), "bare net/http POST loop"),
		Goal{}.Figure("relay_cpu_per_delivery", res.cpuPer, "µs", nil, ""),
		Goal{}.Figure("relay_server_cpu_per_delivery", res.serverPer, "µs", nil, ""),
	}
	if one != nil {
		for i, r := range res.perReplica {
			results = append(results, Goal{}.Figure(fmt.Sprintf("relay_replica%d_throughput", i+1), r, "deliveries/s", nil, ""))
		}
		results = append(results, Goal{MinRatio: Ref(0.9)}.Figure("relay_scaling", res.rate, "deliveries/s", Ref(one.rate), "one replica's, same run"))
	}
	lag, err := pacedScale(ctx, env, o, rx, res.rate/2, paced)
	if err != nil {
		return nil, fmt.Errorf("bench relay: paced at %.0f/s: %w", res.rate/2, err)
	}
	env.Logf("bench relay: offered %.0f/s: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms", lag.offered, lag.p50, lag.p90, lag.p99)
	results = append(results,
		Goal{}.Figure("relay_lag_p50", lag.p50, "ms", nil, ""),
		Goal{}.Figure("relay_lag_p99", lag.p99, "ms", nil, ""))
	return &Report{Results: results}, nil
}

// scaleResult is one drain: deliveries/s of all replicas and of each, and the CPU per delivery
// of this process and of the servers (µs).
type scaleResult struct {
	rate       float64
	perReplica []float64
	cpuPer     float64
	serverPer  float64
	took       time.Duration
}

// scaleDrain commits jobs×perJob events, then runs the replicas until every delivery is
// recorded delivered.
func scaleDrain(ctx context.Context, env Env, o RelayOptions, rx *receiver, jobs, perJob int) (*scaleResult, error) {
	rig, err := newScaleRig(ctx, o, rx, jobs)
	if err != nil {
		return nil, err
	}
	defer rig.close()
	for i := range rig.jobs {
		if err := rig.emit(ctx, &rig.jobs[i], perJob); err != nil {
			return nil, fmt.Errorf("emit: %w", err)
		}
	}
	n := int64(jobs * perJob * relayEndpoints)
	rig.want = n
	rx.reset()
	stopProfile, err := startProfile(o.CPUProfile)
	if err != nil {
		return nil, err
	}
	defer stopProfile()
	start, cpu, server := time.Now(), cpuTime(), serverCPU()
	stop, failed := rig.start(ctx)
	select {
	case <-rig.done:
	case err := <-failed:
		stop()
		return nil, fmt.Errorf("relay stopped: %w", err)
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	case <-time.After(10 * time.Minute):
		stop()
		return nil, fmt.Errorf("relay: %d of %d deliveries recorded after 10 minutes", rig.total.Load(), n)
	}
	took := time.Since(start)
	used, serverUsed := cpuTime()-cpu, serverCPU()-server
	stopProfile()
	if err := stop(); err != nil {
		return nil, err
	}
	res := &scaleResult{rate: float64(n) / took.Seconds(), took: took,
		cpuPer: float64(used.Microseconds()) / float64(n), serverPer: float64(serverUsed.Microseconds()) / float64(n)}
	var shares, commits []string
	for _, c := range rig.counted {
		r := float64(c.delivered.Load()) / took.Seconds()
		res.perReplica = append(res.perReplica, r)
		shares = append(shares, fmt.Sprintf("%.0f", r))
		commits = append(commits, fmt.Sprintf("%d in %.1f s", c.commits.Load(), time.Duration(c.busy.Load()).Seconds()))
	}
	env.Logf("bench relay: group commits per replica (time in Commit summed over transactions, which overlap with %d committers): %s", relay.CommittersPostgres, strings.Join(commits, ", "))
	env.Logf("bench relay: %d replica(s) on bus %s: %.0f deliveries/s in %.1f s (per replica %s); %s; servers: %.1f µs of CPU per delivery",
		o.Replicas, o.Bus, res.rate, took.Seconds(), strings.Join(shares, ", "), perItem(used, took, int(n), "delivery"), res.serverPer)
	return res, nil
}

// pacedScale commits events two per transaction at rate deliveries/s for d while the replicas
// run, and returns the commit→receipt lags after the first fifth of d (warm-up).
func pacedScale(ctx context.Context, env Env, o RelayOptions, rx *receiver, rate float64, d time.Duration) (pacedResult, error) {
	jobs := int(rate / relayEndpoints / pacedPerJob * d.Seconds())
	rig, err := newScaleRig(ctx, o, rx, max(jobs, 1))
	if err != nil {
		return pacedResult{}, err
	}
	defer rig.close()
	rx.reset()
	stop, _ := rig.start(ctx)
	defer stop()
	start := time.Now()
	every := time.Duration(float64(time.Second) * relayEndpoints * pacedPerJob / rate)
	warmed := time.AfterFunc(d/5, func() { rx.reset() })
	defer warmed.Stop()
	committed := make([]time.Time, len(rig.jobs))
	var wg sync.WaitGroup
	errs := make(chan error, pacedProducers)
	for p := range pacedProducers {
		wg.Go(func() {
			for i := p; i < len(rig.jobs) && ctx.Err() == nil; i += pacedProducers {
				if at := start.Add(time.Duration(i) * every); time.Until(at) > 0 {
					time.Sleep(time.Until(at))
				}
				if err := rig.emit(ctx, &rig.jobs[i], pacedPerJob); err != nil {
					errs <- err
					return
				}
				committed[i] = time.Now()
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return pacedResult{}, fmt.Errorf("emit: %w", err)
	default:
	}
	offered := float64(len(rig.jobs)*pacedPerJob*relayEndpoints) / time.Since(start).Seconds()
	time.Sleep(time.Second) // the last events' deliveries (the bus polls every 100 ms)
	return pacedResult{offered: offered}.lagsOf(rx.taken(), rig.jobs, committed), nil
}

// serverCPU returns the CPU time (user and system) used so far by every process named
// postgres or nats-server on this machine (0 where /proc cannot be read).
func serverCPU() time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		if name := s[open+1 : end]; name != "postgres" && name != "nats-server" {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 { // state is field 3; utime and stime are fields 14 and 15
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ is 100 on Linux
}

// startProfile starts a CPU profile into the file path (nothing when path is empty) and
// returns what stops it and closes the file, which may be called more than once.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { pprof.StopCPUProfile(); f.Close() }) }, nil
}
