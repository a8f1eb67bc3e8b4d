// Package connectors holds what a source finds (the Recording, and what it says about the
// owner), the one Source contract every connector implements with its small optional
// capabilities (Finisher, Pending, Checker, Backfiller, Pusher), the transient-failure marker
// the bridge retries on, and a small registry from which the bridge builds sources by type
// name. Connectors live in subpackages (localdir, ...) and register themselves; connectortest is
// the suite they all pass. Nothing here imports the bridge: data flows down, connectors →
// mapping → bridge.
package connectors

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Source is where recordings come from.
type Source interface {
	// List returns the recordings ready to be taken since cursor, and the cursor to store with
	// them. The store deduplicates on (source, item, version), so listing an item twice is
	// harmless; missing one is not.
	List(ctx context.Context, cursor string) ([]Recording, string, error)
	// Open returns the content of a recording. It fails when the item no longer matches the
	// recording's version (changed or gone). A failure that may pass by itself (5xx, 429, a
	// network failure, an HTML page or a short body instead of the file) wraps
	// ErrTransient (see Transient), in Open's error or in the body's read error: the job is
	// retried, then held. Any other failure is permanent: the job is skipped with it.
	Open(ctx context.Context, r Recording) (io.ReadCloser, error)
}

// TransientStatus reports whether an HTTP status of a source may pass by itself: 408, 425, 429
// and 5xx. Others (403, 404, 412, ...) are answers about the item and stay.
func TransientStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooEarly ||
		status == http.StatusTooManyRequests || status >= 500 && status <= 599
}

// Outcome is how a recording's job ended, as a Finisher hears it.
type Outcome string

// Outcomes.
const (
	// OutcomeDone: transcribed, with every requested report.
	OutcomeDone Outcome = "done"
	// OutcomeFailed: the service failed it or refused it for good.
	OutcomeFailed Outcome = "failed"
	// OutcomeSkipped: never uploaded (filtered, too small or large, unsupported, invalid mapping).
	OutcomeSkipped Outcome = "skipped"
)

// Finisher is implemented by sources that act on an item once its job has ended (move a file
// to done/ or failed/, delete or trash it).
type Finisher interface {
	Finish(ctx context.Context, r Recording, outcome Outcome) error
}

// Pending is implemented by sources that know of items not yet ready to be taken (a file still
// being written); a bridge run that stops once nothing can move waits for them.
type Pending interface {
	Pending() int
}

// Factory builds a source named name from its type-specific options; unknown or bad options
// are errors naming the option.
type Factory func(name string, options map[string]any) (Source, error)

var (
	mu        sync.Mutex
	factories = map[string]Factory{}
)

// Register makes a source type available; connectors call it from init. It panics on a
// duplicate type.
func Register(typ string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[typ]; dup {
		panic("connectors: type " + typ + " registered twice")
	}
	factories[typ] = f
}

// New builds a source of type typ. The error names the type when it is unknown.
func New(typ, name string, options map[string]any) (Source, error) {
	mu.Lock()
	f, ok := factories[typ]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown source type %q (known: %v)", typ, Types())
	}
	return f(name, options)
}

// Types lists the registered source types.
func Types() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for t := range factories {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Checker is implemented by sources that can verify their credentials and access without
// taking anything: Check returns one line per thing found in order, and an error saying what
// is missing or refused.
type Checker interface {
	Check(ctx context.Context) ([]string, error)
}

// Backfiller is implemented by sources that can walk their history from a date (bridge sources
// backfill); progress reports windows done out of total.
type Backfiller interface {
	Backfill(ctx context.Context, from time.Time, progress func(done, total int)) ([]Recording, error)
}

// Intake stores recordings as jobs (unique on source, item and version); a pushed item is
// acknowledged only once it returns.
type Intake func(ctx context.Context, recs []Recording) error

// Pusher is implemented by sources that also receive items pushed to the bridge's HTTP server
// (webhooks at /hooks/<type>/<source name>).
type Pusher interface {
	Handler(intake Intake) http.Handler
}
