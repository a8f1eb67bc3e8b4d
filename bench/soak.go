package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/mapping"
)

func init() { Register("soak", Soak) }

// DefaultSoak is how long bridge bench soak runs without --duration.
const DefaultSoak = time.Hour

// soakEvery is how often a recording arrives in the soak's inbox.
const soakEvery = 2 * time.Second

// Soak is the soak workload (bridge bench soak --duration, an hour by default, two minutes with
// env.Short unless a duration is given): bridge run's parts in this process for the whole
// duration, on the embedded default (a SQLite store, a local folder moving finished files),
// with a relay to two endpoints; the sandbox and the endpoints' receiver run in a process of
// their own (SoakPeer), so what this process holds is the bridge's. A recording arrives every
// 2 s and each becomes deliveries; for a quarter of every fault period (a minute, or a quarter
// of the run when shorter) a third of the API's answers are 503 and a third of the endpoints'
// 500. Every sample interval (a minute, or a twelfth of the run when shorter) it prints the
// resident set, goroutines, open files and HTTP client connections (the fewest seen in the
// interval) and the database's size, and writes a heap profile into env.HeapProfiles when set;
// the figures are each one's growth over the second half of the run, the goroutines and files
// beside the connections', and the connections against their pools' bound (soakResults); at
// the end, none may be left open once the clients closed their idle ones (connectionsLeft).
func Soak(ctx context.Context, env Env) (*Report, error) {
	d := env.Duration
	if d <= 0 {
		d = DefaultSoak
		if env.Short {
			d = 2 * time.Minute
		}
	}
	if env.HeapProfiles != "" {
		runtime.MemProfileRate = 4096 // a finer profile than the default 512 KiB's, for small growths
	}
	rig, err := newSoakRig(ctx, env.Dir, min(time.Minute, d/4))
	if err != nil {
		return nil, fmt.Errorf("bench soak: %w", err)
	}
	defer rig.close()
	samples, err := rig.run(ctx, env, d)
	if err != nil {
		return nil, fmt.Errorf("bench soak: %w", err)
	}
	left := rig.connectionsLeft()
	counts, _ := rig.store.Counts(ctx)
	rx, err := rig.peer.stop()
	rig.peer = nil
	if err != nil {
		return nil, fmt.Errorf("bench soak: %w", err)
	}
	env.Logf("bench soak: %d recordings written, jobs %v, %d deliveries answered 2xx, %d refused in fault windows",
		rig.written.Load(), counts, rx.OK, rx.Refused)
	results, charts := soakResults(samples, d, rx.OK)
	results = append(results, Goal{MaxValue: Ref(0)}.Figure("soak_http_connections_left", float64(left), "connections", nil, ""))
	return &Report{Results: results, Charts: charts}, nil
}

// soakResults judges the samples of a soak of d: each metric's growth over the second half
// of the run (a fitted line, see growth) against 5%, the metrics marked warms only from
// soakWarm on (reported before); the HTTP client connections against soakConnBound; and at
// least one delivery. It returns the figures and a chart
// per metric.
func soakResults(samples []soakSample, d time.Duration, deliveries int64) ([]Result, []Chart) {
	var results []Result
	var charts []Chart
	for _, m := range soakMetrics {
		g := growth(samples, d, m.value) * 100
		goal := Goal{MaxValue: Ref(5)}
		if m.warms && d < soakWarm {
			goal = Goal{} // reported: caches and pools still fill (see soakWarm)
		}
		results = append(results, goal.Figure("soak_"+m.name+"_growth", g, "%", nil, ""))
		lines, also := []Line{{Name: m.name}}, soakBeside[m.name]
		for _, b := range also {
			lines = append(lines, Line{Name: b.name})
		}
		for _, s := range samples {
			lines[0].Points = append(lines[0].Points, Point{s.at.Minutes(), m.value(s)})
			for i, b := range also {
				lines[i+1].Points = append(lines[i+1].Points, Point{s.at.Minutes(), b.value(s)})
			}
		}
		charts = append(charts, Chart{Title: fmt.Sprintf("Soak, %s: %s", d, m.title), XLabel: "minutes", YLabel: m.unit, Lines: lines})
	}
	var conns float64
	for _, s := range samples {
		conns = max(conns, s.conns)
	}
	results = append(results, Goal{MaxValue: Ref(soakConnBound)}.Figure("soak_http_connections", conns, "connections", nil, ""),
		Goal{MinValue: Ref(1)}.Figure("soak_deliveries", float64(deliveries), "deliveries", nil, ""))
	return results, charts
}

// soakConnBound is the most HTTP client connections the soak's bridge may hold through a whole
// sample interval: what the pools keep idle, the API client's for the sandbox and each of the
// two endpoints' (the receiver is on loopback, allowed, so one transport each). A response
// body left open keeps its connection out of the pool for good: many such leaks go past this
// bound, and any one is left open at the end (soak_http_connections_left, connectionsLeft).
const soakConnBound = api.IdleConnsPerHost + 2*relay.IdleConnsPerHost

// soakBeside are the lines drawn beside a metric's, not judged: the Go heap, the Go runtime's
// and the C allocator's memory (parts of the resident memory) and the peer's memory; the goroutines and descriptors with the HTTP
// connections', and the connections.
var soakBeside = map[string][]struct {
	name  string
	value func(soakSample) float64
}{
	"rss": {{"go heap", func(s soakSample) float64 { return s.goHeap }},
		{"go runtime's", func(s soakSample) float64 { return s.goMapped }},
		{"C allocator's in use", func(s soakSample) float64 { return s.cInUse }},
		{"C allocator's free", func(s soakSample) float64 { return s.cFree }},
		{"peer's (apart)", func(s soakSample) float64 { return s.peerRSS }}},
	"goroutines": {{"all", func(s soakSample) float64 { return s.goroutines }},
		{"http connections'", func(s soakSample) float64 { return 2 * s.conns }}},
	"open_files": {{"all", func(s soakSample) float64 { return s.files }},
		{"http connections", func(s soakSample) float64 { return s.conns }}},
}

// soakWarm is the shortest soak whose memory, goroutines, open files and database per job are
// judged: before, they are reported only. SQLite's page cache (2 MiB a connection) fills as the
// store's database grows, for about the first 20 minutes of the trickle: in a two-minute run
// (CI's) the anonymous memory rose from 11.0 to 11.4 MiB over the second minute, while the
// hour's second half stayed flat. The store's pool opens its connections as requests first
// overlap too (the HTTP clients' are counted apart). A two-minute run checks that the soak
// runs, delivers, keeps its write-ahead log bounded and its HTTP connections within their
// pools; the hour judges the growth.
const soakWarm = 30 * time.Minute

// soakMetrics are what a soak watches; warms marks those judged only from soakWarm on.
var soakMetrics = []struct {
	name, title, unit string
	warms             bool
	value             func(soakSample) float64
}{
	{"rss", "resident anonymous memory (RssAnon)", "MiB", true, func(s soakSample) float64 { return s.rss }},
	{"goroutines", "goroutines beside the HTTP connections' (fewest in each minute)", "goroutines", true, func(s soakSample) float64 { return s.otherGoroutines }},
	{"open_files", "open file descriptors beside the HTTP connections' (fewest in each minute)", "files", true, func(s soakSample) float64 { return s.otherFiles }},
	{"db_per_job", "database file per job stored", "KiB per job", true, func(s soakSample) float64 { return s.perJob() * 1024 }},
	{"wal", "write-ahead log", "MiB", false, func(s soakSample) float64 { return s.walSize }},
}

// soakRig is the bridge's parts and their counterparts for one soak.
type soakRig struct {
	dir, inbox, staging, dbPath string
	peer                        *soakPeer // the sandbox and the receiver, in a process of their own
	store                       *sqlite.Store
	pipeline                    *bridge.Pipeline
	relay                       *relay.Relay
	sub                         *bus.Subscriber
	client                      *api.Client // the pipeline's and the relay's API client
	written                     atomic.Int64
}

// newSoakRig starts the peer (the sandbox and the receiver, faulty for a quarter of every
// period) and sets up the store, the pipeline and the relay in a new folder under dir.
func newSoakRig(ctx context.Context, dir string, period time.Duration) (_ *soakRig, err error) {
	dir, err = os.MkdirTemp(dir, "soak-")
	if err != nil {
		return nil, err
	}
	r := &soakRig{dir: dir, inbox: filepath.Join(dir, "inbox"), staging: filepath.Join(dir, "staging"), dbPath: filepath.Join(dir, "bridge.db")}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	for _, d := range []string{r.inbox, r.staging, filepath.Join(dir, "peer")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if r.peer, err = startPeer(ctx, filepath.Join(dir, "peer"), period); err != nil {
		return nil, err
	}
	if r.store, err = sqlite.Open(ctx, r.dbPath); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return r, r.wire(ctx)
}

// wire makes the pipeline over the inbox and the relay to the receiver's two endpoints.
func (r *soakRig) wire(ctx context.Context) error {
	client, err := api.New(api.Config{BaseURL: r.peer.API, Key: trackingKey})
	if err != nil {
		return fmt.Errorf("api client: %w", err)
	}
	r.client = client
	src, err := localdir.New(localdir.Config{Path: r.inbox, MoveFinished: true})
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	instance, err := r.store.InstanceID(ctx)
	if err != nil {
		return err
	}
	m, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:" + trackingAuthor})
	if err != nil {
		return err
	}
	r.pipeline = &bridge.Pipeline{Store: r.store, API: client, Instance: instance,
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: m}}}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	var eps []*relay.Endpoint
	for i := range 2 {
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: fmt.Sprint("crm", i), URL: fmt.Sprintf("%s/crm%d", r.peer.Hooks, i),
			Secrets: []webhook.Secret{secret}, AllowPrivate: true, Timeout: 10 * time.Second})
		if err != nil {
			return err
		}
		eps = append(eps, ep)
	}
	sub, poison, err := r.store.Bus(bus.SubscriberConfig{ConsumerGroup: "relay", PollInterval: relay.BusPollInterval, InFlight: relay.BusInFlight}, nil)
	if err != nil {
		return err
	}
	r.sub = sub
	r.relay = &relay.Relay{Store: r.store, Endpoints: eps, Bus: sub, Poison: poison, API: client}
	return nil
}

// run runs the pipeline and the relay for d with the trickle and the faults, and returns the
// samples taken.
func (r *soakRig) run(ctx context.Context, env Env, d time.Duration) ([]soakSample, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	errs := make(chan error, 2)
	go func() {
		errs <- r.pipeline.Run(ctx, bridge.RunOptions{Schedules: map[string]string{"inbox": "@every 2s"}})
	}()
	go func() { errs <- r.relay.Run(ctx, time.Second) }()
	every, period := min(time.Minute, d/12), min(time.Minute, d/4)
	env.Logf("bench soak: %s: a recording every %s, faults for %s of every %s, a sample every %s", d, soakEvery, period/4, period, every)
	start := time.Now()
	trickle, sample, look := time.NewTicker(soakEvery), time.NewTicker(every), time.NewTicker(2*time.Second)
	defer trickle.Stop()
	defer sample.Stop()
	defer look.Stop()
	var samples []soakSample
	var fl floor
	fl.reset()
	for done := 0; done < 2; {
		select {
		case <-trickle.C:
			if err := r.put(); err != nil {
				return nil, err
			}
		case <-look.C:
			fl.look()
		case <-sample.C:
			if time.Since(start) > d-time.Second {
				continue // the end, as the parts stop: the last sample was the one before
			}
			counts, err := r.store.Counts(ctx)
			if ctx.Err() != nil {
				continue
			}
			if err != nil {
				return nil, err
			}
			n := 0
			for _, c := range counts {
				n += c
			}
			s := takeSample(time.Since(start), r.dbPath, n, &fl)
			s.peerRSS = r.peer.rssAnon()
			if env.HeapProfiles != "" {
				if err := writeHeapProfile(env.HeapProfiles, s.at); err != nil {
					return nil, err
				}
			}
			samples = append(samples, s)
			env.Logf("bench soak: %s", s)
		case err := <-errs:
			if err != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("stopped: %w", err)
			}
			done++
		}
	}
	return samples, nil
}

// connectionsLeft closes the idle connections of the API client and the endpoints' clients,
// once the pipeline and the relay have stopped, and returns how many HTTP client connections
// are still open after up to 5 s: none, unless a response body was left open (a connection
// out of its pool for good) or a request outlived its part.
func (r *soakRig) connectionsLeft() int {
	r.client.CloseIdleConnections()
	r.relay.CloseIdleConnections()
	reads, _ := httpConnGoroutines()
	for deadline := time.Now().Add(5 * time.Second); reads > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // a closed connection's goroutines end on their own
		reads, _ = httpConnGoroutines()
	}
	return reads
}

// put writes the next recording beside the inbox and renames it in, whole.
func (r *soakRig) put() error {
	i := r.written.Add(1)
	name := fmt.Sprintf("call-%06d.wav", i)
	if err := os.WriteFile(filepath.Join(r.staging, name), mediatest.WAV(1, 0, uint64(i)), 0o644); err != nil {
		return err
	}
	return os.Rename(filepath.Join(r.staging, name), filepath.Join(r.inbox, name))
}

// close stops the peer and closes the store.
func (r *soakRig) close() {
	if r.sub != nil {
		r.sub.Close()
	}
	if r.peer != nil {
		r.peer.stop()
	}
	if r.store != nil {
		r.store.Close()
	}
}
