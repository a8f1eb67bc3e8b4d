package bridge

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge/tracing"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
)

// API is what the pipeline needs of the transcription API; *api.Client implements it.
type API interface {
	Upload(ctx context.Context, p api.UploadParams) (*api.UploadResult, error)
	List(ctx context.Context, p api.ListParams) (*api.ListPage, error)
	All(ctx context.Context, p api.ListParams) iter.Seq2[api.ListItem, error]
	Get(ctx context.Context, id string) (*api.Transcription, error)
	RequestReports(ctx context.Context, id string, slugs ...string) ([]api.ReportRef, error)
	Workspace(ctx context.Context) (*api.Workspace, error)
}

var _ API = (*api.Client)(nil)

// Refresher is implemented by mappers whose member list can be read again at once.
type Refresher interface {
	Refresh()
}

// Mapper decides a recording's upload headers; *mapping.Mapper implements it. Its error is the
// reason the job is skipped, unless it wraps mapping.ErrNotReady (the job waits for the next
// step) or mapping.ErrUnmapped (the job is held until a rule matches).
type Mapper interface {
	Map(ctx context.Context, in mapping.Input) (mapping.Decision, error)
}

// UploadOptions are a source's per-upload settings.
type UploadOptions struct {
	Language      string
	ProjectID     string
	Diarize       *bool
	SpeakersCount int
	AIMetadata    bool
	Reports       []string
}

// SourceConfig is one configured source (see source_config.go for its defaults and checks).
type SourceConfig struct {
	// Name identifies the source: jobs, cursors and external ids are kept under it.
	Name string
	// Type is the connector's type (localdir, s3, gdrive, zoom).
	Type string
	// Source is the connector that lists and opens the recordings.
	Source connectors.Source
	// Mapper decides each recording's upload headers (author, external id, metadata).
	Mapper Mapper
	// Upload are the options every upload from this source is sent with.
	Upload UploadOptions
	// RetryDeadline is how long the source may keep failing in ways that may pass before a job
	// is held, from the first such failure (0: DefaultRetryDeadline, 72 h).
	RetryDeadline time.Duration
}

// Pipeline moves jobs from discovery to done. Its steps are safe to call again after a crash:
// every decision is read back from the Store.
type Pipeline struct {
	Store   JobStore
	API     API
	Sources map[string]*SourceConfig
	// Instance is this installation's id (metadata bridge_instance).
	Instance string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives one line per state change and per problem (default: discarded).
	Log *slog.Logger
	// Metrics hears uploads, retries, the tracker's and discovery's lags (nil: nothing).
	Metrics Metrics
	// UploadConcurrency bounds simultaneous uploads (default 4; the client caps at 10).
	UploadConcurrency int
	// IdempotencyWindow is how long a stored key is trusted to be remembered upstream before a
	// job in uploading is looked up instead of retried (default 23 h, inside the 24 h window).
	IdempotencyWindow time.Duration
	// Replica names this process among the replicas sharing the store: the holder of its
	// leases (default DefaultReplica()).
	Replica string
	// Lease is how long this replica's claim on an upload, a source's scan or the tracker lasts
	// without renewal (renewed every third of it); a replica that dies is taken over after at
	// most this long (default DefaultLease, 30 s).
	Lease time.Duration

	defaults sync.Once
	mu       sync.Mutex
	inFlight map[string]bool // jobs with an upload running in this process
	// remapped is set once held, unmapped jobs were all mapped again after start.
	remapped     atomic.Bool
	lastFullPass time.Time // when the tracker last listed queued transcriptions too
	lastTrack    time.Time // when the tracker last polled (trackAllowance)
	// lastKeepAlive is when Run last asked the API only to hear it answer (RunOptions.KeepAlive).
	lastKeepAlive time.Time
	// watch is the mapping generation CheckMapping saw last.
	watch mappingWatch
	// space notes writes refused for want of space (DiskFull).
	space spaceWatch
	// lastBalance is the workspace's available minutes as StartUploads last read them, at
	// lastBalanceAt (see balanceFresh).
	lastBalance   float64
	lastBalanceAt time.Time
	// health is what this process's scans say of each source (SourceHealth).
	health sourceHealth
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now().UTC()
	}
	return time.Now().UTC()
}

func (p *Pipeline) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

// jobAttrs returns the log attributes that let one recording be followed across lines (job_id,
// source, item_id and, once known, transcription_id), then more.
func (p *Pipeline) jobAttrs(j *Job, more ...any) []any {
	attrs := append(make([]any, 0, 8+len(more)), "job_id", j.ID, "source", j.Source, "item_id", j.ItemID)
	if j.TranscriptionID != "" {
		attrs = append(attrs, "transcription_id", j.TranscriptionID)
	}
	if tracing.Enabled() {
		attrs = append(attrs, "trace_id", tracing.TraceID(j.ID))
	}
	return append(attrs, more...)
}

// setDefaults fills the zero fields once, before the first step.
func (p *Pipeline) setDefaults() {
	p.defaults.Do(func() {
		if p.UploadConcurrency == 0 {
			p.UploadConcurrency = 4
		}
		if p.IdempotencyWindow == 0 {
			p.IdempotencyWindow = 23 * time.Hour
		}
		if p.Replica == "" {
			p.Replica = DefaultReplica()
		}
		if p.Lease <= 0 {
			p.Lease = DefaultLease
		}
		p.inFlight = map[string]bool{}
	})
}

// move writes j in state to (from its current state) with reason and events through Move, the
// one transition function, logging the change; a job reaching a final state is finished.
func (p *Pipeline) move(ctx context.Context, j *Job, to State, reason string, events ...Event) error {
	from, was := j.State, j.Reason
	if err := Move(ctx, p.Store, j, to, reason, p.now(), events...); err != nil {
		return err
	}
	p.log().Log(ctx, moveLevel(from, to, was, reason), "job", p.jobAttrs(j, "from", from, "to", to, "reason", reason)...)
	if to.Terminal() {
		p.finish(ctx, j)
	}
	return nil
}

// hold moves j into held with the typed reason why and the words reason.
func (p *Pipeline) hold(ctx context.Context, j *Job, why HoldReason, reason string, events ...Event) error {
	j.Hold = why
	return p.move(ctx, j, StateHeld, reason, events...)
}

// moveLevel is the log level of a job's move from one state (with reason was) to another with
// reason: WARN for what went wrong (into held, skipped, failed or resubmit; a retry, "will
// retry"; reports refused; an author refused and mapped again), DEBUG for a job rescheduled in
// its state with nothing new to say (a balance recheck), INFO for the rest.
func moveLevel(from, to State, was, reason string) slog.Level {
	switch {
	case strings.Contains(reason, "will retry"):
		return slog.LevelWarn
	case from == to && (reason == "" || reason == was):
		return slog.LevelDebug
	case to == StateHeld, to == StateSkipped, to == StateFailed, to == StateResubmit,
		strings.HasPrefix(reason, reasonReportsWait), strings.HasPrefix(reason, reasonReportsNotMade),
		strings.HasPrefix(reason, reasonRemap):
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// outcomes are the terminal states as a source's Finisher hears them.
var outcomes = map[State]connectors.Outcome{
	StateDone: connectors.OutcomeDone, StateFailed: connectors.OutcomeFailed, StateSkipped: connectors.OutcomeSkipped,
}

// finish lets the source act on a job that reached a final state (move the file).
func (p *Pipeline) finish(ctx context.Context, j *Job) {
	sc := p.Sources[j.Source]
	if sc == nil {
		return
	}
	f, ok := sc.Source.(connectors.Finisher)
	outcome, final := outcomes[j.State]
	if !ok || !final {
		return
	}
	if err := f.Finish(ctx, j.Recording, outcome); err != nil {
		p.log().Warn("finish", p.jobAttrs(j, "error", err)...)
	}
}

// Step runs one round of every stage: map discovered jobs, start uploads, track transcriptions
// and settle reports (when track is set and this replica holds the tracker lease). Events leave through the bus (see the relay). A failing stage does not stop the
// later ones; their errors are joined. Upload goroutines may outlive the step: wait on wg.
func (p *Pipeline) Step(ctx context.Context, wg *sync.WaitGroup, track bool) error {
	p.setDefaults()
	var errs []error
	stage := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	stage("map", p.MapDiscovered(ctx))
	stage("upload", p.StartUploads(ctx, wg))
	// One replica at a time tracks and requests reports: the others would only repeat its
	// requests (and its report requests).
	if track && p.lead(ctx, trackerLease) {
		stage("track", p.Track(ctx))
		stage("reports", p.SettleReports(ctx))
	}
	return errors.Join(errs...)
}

// Active reports how many jobs can still move without outside help: not terminal, not held,
// not waiting in resubmit for minutes.
func (p *Pipeline) Active(ctx context.Context) (int, error) {
	counts, err := p.Store.Counts(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for st, c := range counts {
		if !st.Terminal() && st != StateHeld && st != StateResubmit {
			n += c
		}
	}
	return n, nil
}
