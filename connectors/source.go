// Package connectors holds what a source finds (the Recording, and what it says about the
// owner), the one Source contract every connector implements with its small optional
// capabilities (Finisher, Pending, Checker, Backfiller, Pusher, PageLister), the
// transient-failure marker the bridge retries on, and a small registry from which the bridge
// builds sources by type name, decoding each source's options into its connector's Config
// once (Decode). Connectors live in subpackages (localdir, ...) and register themselves;
// connectortest is the suite they all pass. Nothing here imports the bridge: data flows down,
// connectors → mapping → bridge.
package connectors

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Source is where recordings come from.
type Source interface {
	// List returns the recordings ready to be taken since cursor, and the cursor to store with
	// them. The store deduplicates on (source, item, version), and across sources on
	// Recording.DedupeKey, so listing an item twice is harmless; missing one is not.
	List(ctx context.Context, cursor string) ([]Recording, string, error)
	// Open returns the content of a recording. It fails when the item no longer matches the
	// recording's version (changed or gone). A failure that may pass by itself (5xx, 429, a
	// network failure, an HTML page or a short body instead of the file) wraps
	// ErrTransient (see Transient), in Open's error or in the body's read error: the job is
	// retried, then held. Any other failure is permanent: the job is skipped with it.
	Open(ctx context.Context, r Recording) (io.ReadCloser, error)
}

// PageLister is implemented by sources that can hand their listing over a page at a time, so
// that a scan holds one page of recordings in memory rather than the whole listing (an S3
// bucket of 100,000 objects). ListPages lists from cursor as List does and calls page with
// each page's recordings, in order, and a cursor to store with them in the same transaction:
// one a later listing may start from if this one stops after that call, without missing any
// recording not handed over yet (it may list some again; the store deduplicates them). A call
// may carry no recording (only a newer cursor). When ListPages returns nil, page was called at
// least once and its last call carried the cursor List would have returned. An error from page
// ends the listing and is returned as is. The bridge scans with ListPages when a source
// implements it, with List otherwise.
type PageLister interface {
	ListPages(ctx context.Context, cursor string, page func(recs []Recording, cursor string) error) error
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

// Peeker is implemented by sources whose Open is cheap enough to call only to read a
// recording's first bytes (a local file: no request, no download started). The bridge reads the
// first bytes of each new recording of such a source before mapping it, so a file the service
// cannot take (empty, under its minimum, not media, cut short) is skipped before anyone is asked
// who owns it. The content of other sources' recordings is checked when the upload reads it.
type Peeker interface {
	// CheapOpen reports whether Open may be called for the first bytes alone.
	CheapOpen() bool
}

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

// Config is what a connector's configuration (C, its Config struct, through a pointer)
// provides: options tagged koanf:"<option>", each field with a doc comment (the configuration
// reference shows them), SetDefaults and Validate.
type Config[C any] interface {
	*C
	// SetDefaults fills in the defaults of the options left unset. Register calls it on a
	// zero Config, before the options are decoded onto it, so a default may be true or
	// non-zero where the zero value means something else (a given false or 0 replaces it).
	SetDefaults()
	// Validate returns an *OptionError naming the first option at fault, or nil.
	Validate() error
}

// connector is a registered source type.
type connector struct {
	// build makes a source named name from its options.
	build func(name string, options map[string]any) (Source, error)
	// defaults returns a Config with its defaults set.
	defaults func() any
}

var (
	mu       sync.Mutex
	registry = map[string]connector{}
)

// Register makes source type typ available; connectors call it from init. A source of type
// typ is built from its options in one way: a Config C with its defaults set (SetDefaults),
// the options decoded onto it (Decode), checked (Validate), then passed to build, which reads
// what the options point to (secret files) and makes the source. Register panics on a
// duplicate type.
func Register[C any, P Config[C]](typ string, build func(name string, cfg C) (Source, error)) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[typ]; dup {
		panic("connectors: type " + typ + " registered twice")
	}
	registry[typ] = connector{
		build: func(name string, options map[string]any) (Source, error) {
			var c C
			P(&c).SetDefaults()
			if err := Decode(options, typ, &c); err != nil {
				return nil, err
			}
			if err := P(&c).Validate(); err != nil {
				return nil, err
			}
			return build(name, c)
		},
		defaults: func() any {
			var c C
			P(&c).SetDefaults()
			return c
		},
	}
}

// New builds a source of type typ named name from its type-specific options. The error names
// the type when it is unknown; an unknown or bad option is an *OptionError naming it.
func New(typ, name string, options map[string]any) (Source, error) {
	mu.Lock()
	c, ok := registry[typ]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown source type %q (known: %v)", typ, Types())
	}
	return c.build(name, options)
}

// Defaults returns the Config of source type typ (a value of the connector's Config struct)
// with its defaults set, for the configuration reference; ok is false when typ is unknown.
func Defaults(typ string) (cfg any, ok bool) {
	mu.Lock()
	c, ok := registry[typ]
	mu.Unlock()
	if !ok {
		return nil, false
	}
	return c.defaults(), true
}

// Types lists the registered source types.
func Types() []string {
	mu.Lock()
	defer mu.Unlock()
	return slices.Sorted(maps.Keys(registry))
}

// Checker is implemented by sources that can verify their credentials and access without
// taking anything: Check returns one line per thing found in order, and an error saying what
// is missing or refused.
type Checker interface {
	Check(ctx context.Context) ([]string, error)
}

// Backfiller is implemented by sources that can walk their history from a date (bridge sources
// backfill); progress reports windows done out of total. A walk stopped part way (a daily
// limit) returns what it found with the error saying where to start again: both are kept.
type Backfiller interface {
	Backfill(ctx context.Context, from time.Time, progress func(done, total int)) ([]Recording, error)
}

// Intake stores recordings as jobs (unique on source, item and version, and on DedupeKey across
// sources); a pushed item is acknowledged only once it returns.
type Intake func(ctx context.Context, recs []Recording) error

// Pusher is implemented by sources that also receive items pushed to the bridge's HTTP server
// (webhooks at /hooks/<type>/<source name>).
type Pusher interface {
	Handler(intake Intake) http.Handler
}
