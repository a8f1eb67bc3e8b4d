package bench

import (
	"context"
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

// trackingKey is the sandbox key the tracking workload uses, and trackingAuthor the member its
// uploads are authored by.
const (
	trackingKey    = "mk_live_bench_owner_full"
	trackingAuthor = "sam@acme.test"
)

// InFlight is a pipeline over a SQLite store and a local folder, whose n uploads wait at the
// sandbox (served on loopback, its API requests counted): queued or processing.
type InFlight struct {
	// Pipeline tracks the n transcriptions; Store is its store, in DBPath (another replica may
	// open it again).
	Pipeline *bridge.Pipeline
	Store    *sqlite.Store
	DBPath   string
	// API is the client the pipeline uses.
	API *api.Client

	requests, gets atomic.Int64
	srv            *httptest.Server
	sb             *sandbox.Server
}

// StartInFlight uploads n two-second files through the pipeline to a sandbox processing
// concurrency files at once at timeScale (1: real time), with its state in a new folder under
// dir, and returns once all n are queued or processing. Close releases it. It fails when the
// sandbox, the store or the folder cannot be set up, or an upload step fails for good.
func StartInFlight(ctx context.Context, dir string, n, concurrency int, timeScale float64) (*InFlight, error) {
	dir, err := os.MkdirTemp(dir, "inflight-")
	if err != nil {
		return nil, fmt.Errorf("bench tracking: %w", err)
	}
	inbox := filepath.Join(dir, "inbox")
	if err := os.Mkdir(inbox, 0o755); err != nil {
		return nil, fmt.Errorf("bench tracking: %w", err)
	}
	seed := &sandbox.Seed{Workspaces: []sandbox.SeedWorkspace{{Name: "Acme", Plan: "pro", BalanceMinutes: 100000,
		Limits:  sandbox.SeedLimits{Concurrency: concurrency, MaxQueuedFiles: 2 * n},
		Members: []sandbox.SeedMember{{Email: "owner@acme.test", Role: "owner"}, {Email: trackingAuthor, Role: "user"}},
		Keys: []sandbox.SeedKey{{Key: trackingKey, Member: "owner@acme.test",
			Scopes: []string{"read", "uploads:write", "reports:write", "transcriptions:delete", "members:write"}}},
	}}}
	sb, err := sandbox.New(ctx, sandbox.Options{DBPath: filepath.Join(dir, "sandbox.db"), Seed: seed, TimeScale: timeScale,
		MediaDir: dir, DataRate: 1000000})
	if err != nil {
		return nil, fmt.Errorf("bench tracking: sandbox: %w", err)
	}
	f := &InFlight{DBPath: filepath.Join(dir, "bridge.db"), sb: sb}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, sandbox.BasePath+"/") {
			f.requests.Add(1)
			if r.Method == http.MethodGet && len(r.URL.Path) > len(sandbox.BasePath+"/transcriptions/") {
				f.gets.Add(1)
			}
		}
		sb.ServeHTTP(w, r)
	}))
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.srv.Start()
	if err := f.setup(ctx, inbox, n); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// setup opens the store and the pipeline over inbox, and uploads n files.
func (f *InFlight) setup(ctx context.Context, inbox string, n int) error {
	var err error
	if f.Store, err = sqlite.Open(ctx, f.DBPath); err != nil {
		return fmt.Errorf("bench tracking: store: %w", err)
	}
	f.API, err = api.New(api.Config{BaseURL: f.srv.URL + sandbox.BasePath, Key: trackingKey,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 30, DataPerMinute: -1})
	if err != nil {
		return fmt.Errorf("bench tracking: api client: %w", err)
	}
	src, err := localdir.New(localdir.Config{Path: inbox, Recursive: true})
	if err != nil {
		return fmt.Errorf("bench tracking: source: %w", err)
	}
	instance, err := f.Store.InstanceID(ctx)
	if err != nil {
		return fmt.Errorf("bench tracking: store: %w", err)
	}
	m, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:" + trackingAuthor})
	if err != nil {
		return fmt.Errorf("bench tracking: mapping: %w", err)
	}
	f.Pipeline = &bridge.Pipeline{Store: f.Store, API: f.API, Instance: instance, UploadConcurrency: 8,
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: m}}}
	for i := range n {
		if err := os.WriteFile(filepath.Join(inbox, fmt.Sprintf("f%04d.wav", i)), mediatest.WAV(2, 0, uint64(i)), 0o644); err != nil {
			return fmt.Errorf("bench tracking: %w", err)
		}
	}
	if _, err := f.Pipeline.Scan(ctx, "inbox"); err != nil {
		return fmt.Errorf("bench tracking: scan: %w", err)
	}
	for {
		if err := f.Pipeline.MapDiscovered(ctx); err != nil {
			return fmt.Errorf("bench tracking: map: %w", err)
		}
		var wg sync.WaitGroup
		f.Pipeline.StartUploads(ctx, &wg)
		wg.Wait()
		counts, err := f.Store.Counts(ctx)
		if err != nil {
			return fmt.Errorf("bench tracking: counts: %w", err)
		}
		if counts[bridge.StateQueued]+counts[bridge.StateProcessing] == n {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bench tracking: uploads: %w", err)
		}
		if counts[bridge.StateReady]+counts[bridge.StateUploading]+counts[bridge.StateDiscovered] == 0 {
			return fmt.Errorf("bench tracking: uploads ended with %v", counts)
		}
	}
}

// Requests returns the API requests the sandbox has served (the control surface aside), and
// among them the GETs of one transcription.
func (f *InFlight) Requests() (all, gets int64) { return f.requests.Load(), f.gets.Load() }

// Close stops the sandbox and closes the store.
func (f *InFlight) Close() {
	f.srv.Close()
	f.sb.Close()
	if f.Store != nil {
		f.Store.Close()
	}
}
