package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox"
)

func init() { Register("backfill", Backfill) }

// The service's limits per key (api-reference.md, Limits), which the backfill's sandbox enforces.
const (
	backfillPerMinute = 500
	backfillUploads   = 10
)

// backfillScale runs the limits' clock (and the bridge's step, poll and the sandbox's
// processing) this many times faster than real: a limit minute lasts 15 s, and 2,000 uploads
// at the limit take about a minute instead of four.
const backfillScale = 4

// Backfill is the backfill workload (bridge bench backfill): 2,000 small recordings (200 with
// env.Short) in a local folder, synced by the pipeline (a SQLite store, upload concurrency 10,
// the API client's limiter at the key's 500 data requests a minute) to a sandbox enforcing
// those limits on a clock backfillScale times faster, as bridge run would with the folder as
// its source:
//   - backfill_rate: uploads answered per limit minute, from the first upload's arrival to the
//     last one's answer, beside the limit itself, 500 a minute: the tracking requests made
//     meanwhile (lists, GETs of finished transcriptions, the balance checks) count in the same
//     budget and are answered too, so they take their share out of the ratio. Goal ≥ 0.9;
//   - backfill_429s: 429 answers of the sandbox during the run (goal 0: the bridge paces
//     itself, it does not bounce off the limit);
//   - backfill_tracking: the tracking requests per limit minute, beside the budget (reported);
//   - backfill_big_throughput: 20 files of 200 MiB (8 MiB with env.Short) uploaded by the API
//     client 10 at once, beside curl -T 10 at once, bytes per second (goal ≥ 0.8).
func Backfill(ctx context.Context, env Env) (*Report, error) {
	n := 2000
	if env.Short {
		n = 200
	}
	run, err := backfill(ctx, env, n)
	if err != nil {
		return nil, fmt.Errorf("bench backfill: %w", err)
	}
	minutes := run.took.Seconds() / (time.Minute / backfillScale).Seconds()
	rate, tracking := float64(n)/minutes, float64(run.tracking)/minutes
	env.Logf("bench backfill: %d uploads in %.1f s (%.2f limit minutes): %.0f uploads/min, %.0f tracking requests/min, %d answered 429; %.2f× the limit of %d; by then the sandbox had finished %d and the tracker had seen %d of them done (the rest once the uploads no longer queue)",
		n, run.took.Seconds(), minutes, rate, tracking, run.tooMany, rate/backfillPerMinute, backfillPerMinute, run.finished, run.done)
	results := []Result{
		Goal{MinRatio: Ref(0.9)}.Figure("backfill_rate", rate, "uploads/min", Ref(backfillPerMinute), "the 500/min limit, tracking inside it"),
		Goal{MaxValue: Ref(0)}.Figure("backfill_429s", float64(run.tooMany), "429s", nil, ""),
		Goal{}.Figure("backfill_tracking", tracking, "requests/min", Ref(backfillPerMinute), "the 500/min budget"),
	}
	big, err := bigUploads(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("bench backfill: %w", err)
	}
	return &Report{Results: append(results, big)}, nil
}

// backfillRun is what one backfill measured: the time from the first upload's arrival to the
// last one's answer, the tracking requests (every data request but the uploads) and the 429s
// answered meanwhile, and the transcriptions the sandbox had finished and the jobs the tracker
// had seen done by then.
type backfillRun struct {
	took              time.Duration
	tracking, tooMany int64
	finished, done    int
}

// backfillCounter counts what the sandbox answers: uploads accepted, other requests, 429s.
type backfillCounter struct {
	uploads, others, tooMany atomic.Int64
	mu                       sync.Mutex
	first, last              time.Time
	want                     int64
	done                     chan struct{}
	once                     sync.Once
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) { w.code = code; w.ResponseWriter.WriteHeader(code) }

// wrap counts h's API requests.
func (c *backfillCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, sandbox.BasePath+"/") {
			h.ServeHTTP(w, r)
			return
		}
		upload := r.Method == http.MethodPost && r.URL.Path == sandbox.BasePath+"/transcriptions"
		if upload {
			c.mu.Lock()
			if c.first.IsZero() {
				c.first = time.Now()
			}
			c.mu.Unlock()
		}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		switch {
		case sw.code == http.StatusTooManyRequests:
			c.tooMany.Add(1)
		case upload && sw.code < 300:
			c.mu.Lock()
			c.last = time.Now()
			c.mu.Unlock()
			if c.uploads.Add(1) == c.want {
				c.once.Do(func() { close(c.done) })
			}
			return
		}
		if !upload {
			c.others.Add(1)
		}
	})
}

// backfill syncs n small recordings through the pipeline to a sandbox enforcing the limits.
func backfill(ctx context.Context, env Env, n int) (*backfillRun, error) {
	dir, err := os.MkdirTemp(env.Dir, "backfill-")
	if err != nil {
		return nil, err
	}
	inbox := filepath.Join(dir, "inbox")
	if err := os.Mkdir(inbox, 0o755); err != nil {
		return nil, err
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(inbox, fmt.Sprintf("call-%04d.wav", i)), mediatest.WAV(1, 0, uint64(i+1)), 0o644); err != nil {
			return nil, err
		}
	}
	window := time.Minute / backfillScale
	seed := &sandbox.Seed{Workspaces: []sandbox.SeedWorkspace{{Name: "Acme", Plan: "pro", BalanceMinutes: 100000,
		Limits:  sandbox.SeedLimits{MaxQueuedFiles: 2 * n, UploadsPerDay: 10 * n},
		Members: []sandbox.SeedMember{{Email: "owner@acme.test", Role: "owner"}, {Email: trackingAuthor, Role: "user"}},
		Keys: []sandbox.SeedKey{{Key: trackingKey, Member: "owner@acme.test",
			Scopes: []string{"read", "uploads:write", "reports:write", "transcriptions:delete", "members:write"}}},
	}}}
	sb, err := sandbox.New(ctx, sandbox.Options{DBPath: filepath.Join(dir, "sandbox.db"), Seed: seed, MediaDir: dir,
		TimeScale: 1.0 / backfillScale, DataRate: backfillPerMinute, RateWindow: window})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer sb.Close()
	count := &backfillCounter{want: int64(n), done: make(chan struct{})}
	srv := httptest.NewUnstartedServer(count.wrap(sb))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	defer srv.Close()
	p, store, err := backfillPipeline(ctx, dir, inbox, srv.URL+sandbox.BasePath, window)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- p.Run(rctx, bridge.RunOptions{Schedules: map[string]string{"inbox": "@every 10s"},
			StepInterval: time.Second / backfillScale, PollInterval: TrackingPoll / backfillScale})
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-count.done:
	case err := <-done:
		return nil, fmt.Errorf("pipeline stopped: %w", err)
	case <-time.After(time.Duration(3*n/backfillPerMinute+2) * window * 2):
		return nil, fmt.Errorf("%d of %d uploads after %s", count.uploads.Load(), n, time.Duration(3*n/backfillPerMinute+2)*window*2)
	}
	count.mu.Lock()
	run := &backfillRun{took: count.last.Sub(count.first), tracking: count.others.Load(), tooMany: count.tooMany.Load()}
	count.mu.Unlock()
	states, err := store.Counts(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	run.done = states[bridge.StateDone]
	if run.finished, err = sandboxFinished(ctx, srv.URL); err != nil {
		return nil, err
	}
	return run, nil
}

// backfillPipeline is the pipeline bridge run makes of a local folder: a SQLite store in dir,
// uploads 10 at once, the API client limited to the key's data requests per window.
func backfillPipeline(ctx context.Context, dir, inbox, base string, window time.Duration) (*bridge.Pipeline, *sqlite.Store, error) {
	store, err := sqlite.Open(ctx, filepath.Join(dir, "bridge.db"))
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	client, err := api.New(api.Config{BaseURL: base, Key: trackingKey, DataPerMinute: backfillPerMinute, RateWindow: window,
		MaxConcurrentUploads: backfillUploads})
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("api client: %w", err)
	}
	src, err := localdir.New(localdir.Config{Path: inbox})
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("source: %w", err)
	}
	instance, err := store.InstanceID(ctx)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	m, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:" + trackingAuthor})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	p := &bridge.Pipeline{Store: store, API: client, Instance: instance, UploadConcurrency: backfillUploads,
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: m}}}
	return p, store, nil
}

// sandboxFinished counts the transcriptions the sandbox at root holds in a final status, from
// its control surface (outside the key's budget).
func sandboxFinished(ctx context.Context, root string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+sandbox.ControlPath+"/workspaces", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("sandbox workspaces: %w", err)
	}
	defer resp.Body.Close()
	var out struct{ Items []sandbox.WorkspaceState }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("sandbox workspaces: %w", err)
	}
	n := 0
	for _, ws := range out.Items {
		n += ws.Transcriptions[api.StatusCompleted] + ws.Transcriptions[api.StatusFailed] + ws.Transcriptions[api.StatusInsufficientBalance]
	}
	return n, nil
}
