// Package sandbox is a faithful, stateful emulator of the transcription API as an http.Handler
// over SQLite: every endpoint, status, error code and limit of the reference, a controllable
// processing speed, seeded workspaces and fault injection. See README.md for the choices made
// where the reference says "not shown".
package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// BasePath is the versioned developer prefix every API path lives under.
const BasePath = "/developer/v1"

// Options configure a Server. The zero value is usable: an in-memory database, the demo seed,
// real time, no faults.
type Options struct {
	// DBPath is the SQLite file holding the state; empty keeps it in memory.
	DBPath string
	// Seed creates the workspaces when the database is new; nil uses DemoSeed.
	Seed *Seed
	// TimeScale multiplies every processing time (0.01 finishes a one-hour file in 2.4 s); 0 means 1.
	TimeScale float64
	// Faults injected at random; zero injects none. The X-Sandbox-Fault header works regardless.
	Faults FaultSpec
	// FaultSeed seeds the fault RNG for reproducible runs.
	FaultSeed int64
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// MediaDir receives uploaded bodies while they wait for processing; empty uses os.TempDir().
	MediaDir string
	// StallTimeout is how long an upload may send no data before 408 upload_timeout (default 60 s).
	StallTimeout time.Duration
	// UploadTimeout is the longest an upload may last (default 90 min).
	UploadTimeout time.Duration
	// DataRate and DeleteRate are the per-key requests per minute (defaults 500 and 30).
	DataRate, DeleteRate int
	// RateWindow is the span DataRate and DeleteRate count over (default a minute, the
	// service's): a tenth of a minute runs the limits ten times faster, so a benchmark at the
	// limit (bridge bench backfill) takes a tenth of the time. The client must be told the same
	// (api.Config.RateWindow).
	RateWindow time.Duration
	// Logf receives one line per notable event (startup, reset); nil discards.
	Logf func(format string, args ...any)
}

func (o *Options) setDefaults() {
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MediaDir == "" {
		o.MediaDir = os.TempDir()
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = 60 * time.Second
	}
	if o.UploadTimeout == 0 {
		o.UploadTimeout = 90 * time.Minute
	}
	if o.DataRate == 0 {
		o.DataRate = 500
	}
	if o.RateWindow <= 0 {
		o.RateWindow = time.Minute
	}
	if o.DeleteRate == 0 {
		o.DeleteRate = 30
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Seed == nil {
		o.Seed = DemoSeed()
	}
}

// Validate reports the first option that is out of range.
func (o *Options) Validate() error {
	if o.TimeScale < 0 {
		return fmt.Errorf("time scale %v: must be positive", o.TimeScale)
	}
	if err := o.Faults.Validate(); err != nil {
		return err
	}
	if o.Seed != nil {
		return o.Seed.Validate()
	}
	return nil
}

// Server is the sandbox. It implements http.Handler; Close stops its processor.
type Server struct {
	opts    Options
	db      *sql.DB
	mux     *http.ServeMux
	limits  *rateLimiter
	uploads *uploadSlots
	faults  *faultInjector

	// GeneratedKeys are the keys created while seeding (shown once; only hashes are stored).
	GeneratedKeys []GeneratedKey

	journaled atomic.Int64 // requests journaled since start, to prune now and then

	// readHook, when set (tests only), runs each time a request has read a transcription's row,
	// before it reads anything else about it.
	readHook atomic.Pointer[func()]

	kick   chan struct{}
	stop   context.CancelFunc
	done   chan struct{}
	closed sync.Once
}

var _ http.Handler = (*Server)(nil)

// New opens the database, seeds it when it is new and starts the processor. It returns an error
// naming the option or seed field at fault.
func New(ctx context.Context, opts Options) (*Server, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	db, err := openDB(ctx, opts.DBPath)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:    opts,
		db:      db,
		limits:  newRateLimiter(),
		uploads: newUploadSlots(),
		faults:  newFaultInjector(opts.Faults, opts.FaultSeed),
		kick:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if err := s.seedIfEmpty(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// Uploads that were being received when the process stopped never finished: free their keys.
	if _, err := db.ExecContext(ctx, `DELETE FROM idempotency WHERE state = 'inflight'`); err != nil {
		db.Close()
		return nil, fmt.Errorf("release idempotency keys: %w", err)
	}
	s.routes()
	pctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go s.process(pctx)
	return s, nil
}

// Close stops the processor and closes the database. Uploaded files still waiting are removed.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		s.stop()
		<-s.done
		s.removeAllMedia(context.Background())
		err = s.db.Close()
	})
	return err
}

func (s *Server) now() time.Time { return s.opts.Now().UTC() }

// afterRecordRead runs the test hook set in readHook, if any.
func (s *Server) afterRecordRead() {
	if f := s.readHook.Load(); f != nil {
		(*f)()
	}
}

func (s *Server) seedIfEmpty(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM workspaces`).Scan(&n); err != nil {
		return fmt.Errorf("read workspaces: %w", err)
	}
	if n > 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		keys, err := s.opts.Seed.apply(ctx, tx, s.now())
		s.GeneratedKeys = keys
		return err
	})
}

// Reset wipes every transcription, report, idempotency key and journal entry and re-applies the
// seed, as a fresh start. Generated keys are generated anew and returned.
func (s *Server) Reset(ctx context.Context) ([]GeneratedKey, error) {
	s.removeAllMedia(ctx)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, t := range []string{"daily_counts", "journal", "idempotency", "reports", "transcriptions", "api_keys", "prompts",
			"project_members", "projects", "identities", "members", "workspaces"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
				return fmt.Errorf("reset %s: %w", t, err)
			}
		}
		keys, err := s.opts.Seed.apply(ctx, tx, s.now())
		s.GeneratedKeys = keys
		return err
	})
	s.limits.reset()
	s.wake()
	return s.GeneratedKeys, err
}

func (s *Server) removeAllMedia(ctx context.Context) {
	rows, err := s.db.QueryContext(ctx, `SELECT media_path FROM transcriptions WHERE media_path != ''`)
	if err != nil {
		return
	}
	var paths []string
	for rows.Next() {
		var p string
		if rows.Scan(&p) == nil {
			paths = append(paths, p)
		}
	}
	rows.Close()
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.opts.Logf("sandbox: remove %s: %v", p, err)
		}
	}
}

// wake nudges the processor to look at the queue now.
func (s *Server) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
