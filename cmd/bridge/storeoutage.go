package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge/postgres"
)

// storeOutage turns a PostgreSQL outage into two log lines per replica instead of one per
// failed statement: every loop of the bridge (scans, uploads, tracking, the relay, the bus,
// exports, leases) keeps retrying on its own schedule, and each would log its failure. While
// the store is unreachable (unreachable, postgres.Unreachable, on an error of a record at WARN
// or above, and the store's ping failing, unless certain says the error is PostgreSQL's own),
// the first such record becomes one WARN "store unreachable" and the others are counted and
// dropped; a watcher pings the store with backoff (1 s doubling to 4 s) and, once it answers,
// logs one INFO "store reachable again" with how long it was away and how many failures it
// absorbed (failures).
type storeOutage struct {
	next        slog.Handler // the run's own handler
	unreachable func(error) bool
	// certain says an error is the store's for sure (PostgreSQL's own), with no ping: a
	// session cut by a restart shows on a pooled connection once the server is back.
	certain func(error) bool
	ping    func(context.Context) error

	mu       sync.Mutex
	down     bool
	since    time.Time
	failures int
	wake     chan struct{} // signalled when an outage starts
}

// watchDatabase is watchStore for the store of cfg, on PostgreSQL (SQLite is a file: it does
// not go away), asking the schema version as its ping; log itself otherwise.
func watchDatabase(ctx context.Context, cfg *Config, log *slog.Logger, store database) *slog.Logger {
	if cfg.Store.Driver != "postgres" {
		return log
	}
	return watchStore(ctx, log, postgres.Unreachable, postgres.FromServer, func(ctx context.Context) error {
		_, err := store.SchemaVersion(ctx)
		return err
	})
}

// watchStore returns log behind a storeOutage for the store that ping asks (unreachable and
// certain classify errors, see storeOutage), and starts its watcher; the watcher ends with ctx.
func watchStore(ctx context.Context, log *slog.Logger, unreachable, certain func(error) bool, ping func(context.Context) error) *slog.Logger {
	o := &storeOutage{next: log.Handler(), unreachable: unreachable, certain: certain, ping: ping, wake: make(chan struct{}, 1)}
	go o.watch(ctx)
	return slog.New(outageHandler{next: log.Handler(), o: o})
}

// outageHandler is the slog.Handler of watchStore's logger.
type outageHandler struct {
	next slog.Handler
	o    *storeOutage
}

func (h outageHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h outageHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return outageHandler{next: h.next.WithAttrs(as), o: h.o}
}

func (h outageHandler) WithGroup(name string) slog.Handler {
	return outageHandler{next: h.next.WithGroup(name), o: h.o}
}

func (h outageHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	var cause error
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && h.o.unreachable(err) {
			cause = err
			return false
		}
		return true
	})
	if cause == nil {
		return h.next.Handle(ctx, r)
	}
	if !h.o.isDown() && !h.o.certain(cause) {
		// The error may only look like the store's (an API or webhook host refusing
		// connections reads the same): the store is asked before an outage is declared.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		err := h.o.ping(pctx)
		cancel()
		if err == nil {
			return h.next.Handle(ctx, r)
		}
	}
	if !h.o.failed() || !h.next.Enabled(ctx, slog.LevelWarn) {
		return nil // counted: the outage's WARN is out already (or below the level)
	}
	w := slog.NewRecord(r.Time, slog.LevelWarn, "store unreachable; every part retries with backoff until it answers", r.PC)
	w.AddAttrs(slog.String("during", r.Message), slog.Any("error", cause))
	return h.next.Handle(ctx, w)
}

func (o *storeOutage) isDown() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down
}

// failed counts a failure and reports whether it is the first of an outage.
func (o *storeOutage) failed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failures++
	if o.down {
		return false
	}
	o.down, o.since, o.failures = true, time.Now(), 1
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return true
}

// watch waits for an outage, then pings the store with backoff until it answers, and logs
// its end.
func (o *storeOutage) watch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		}
		for wait := time.Second; ; wait = min(2*wait, 4*time.Second) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := o.ping(pctx)
			cancel()
			if err == nil {
				break
			}
		}
		o.mu.Lock()
		since, failures := o.since, o.failures
		o.down = false
		o.mu.Unlock()
		if o.next.Enabled(ctx, slog.LevelInfo) {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "store reachable again", 0)
			r.AddAttrs(slog.Duration("away", time.Since(since).Round(time.Millisecond)), slog.Int("failures", failures))
			o.next.Handle(ctx, r)
		}
	}
}
