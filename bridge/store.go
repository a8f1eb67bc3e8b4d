package bridge

import (
	"context"
	"errors"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// ErrConflict is returned by JobStore.Update when the job is no longer in the expected state:
// another worker moved it first.
var ErrConflict = errors.New("job changed concurrently")

// ErrNotFound is returned for an unknown job id.
var ErrNotFound = errors.New("job not found")

// JobFilter selects jobs for listing. Zero fields match everything.
type JobFilter struct {
	States []State
	Source string
	// DueBefore keeps jobs whose NextAt is at or before it (zero: any).
	DueBefore time.Time
	// Query, when set, keeps the jobs with it (any case, a part will do; ASCII letters only
	// fold on SQLite) in their file name, item id, external id, author, owner (id, e-mail,
	// name), job id or transcription id: what the status page's Jobs search finds.
	Query string
	// Limit bounds the result (0: no bound).
	Limit int
}

// MappingChange is the store's record of the latest mapping change, shared by every process
// on the store: bridge run compares Generation with what it saw last and, when it moved, maps
// its held jobs again with a fresh member list.
type MappingChange struct {
	// Generation counts the changes; 0 before the first.
	Generation int64 `json:"generation"`
	// Reason says what changed ("identities apply --source zoom: 2 created").
	Reason string `json:"reason,omitempty"`
	// At is when the change was recorded.
	At time.Time `json:"at,omitzero"`
}

// JobStore keeps jobs, cursors, history, the outbox and the mapping generation: what the
// pipeline uses.
type JobStore interface {
	// AddRecordings stores a discovered job for each recording not seen before (unique on
	// source, item and version, and on the recording's DedupeKey when it has one, across
	// sources) and sets the source's cursor, in one transaction. It returns the jobs it
	// created; a second sighting is a no-op.
	AddRecordings(ctx context.Context, source string, recs []connectors.Recording, cursor string, now time.Time) ([]Job, error)
	// Cursor returns the source's cursor ("" before the first scan).
	Cursor(ctx context.Context, source string) (string, error)
	// Update writes j if the stored job is still in state from and, unless j.Revision is 0 (a
	// job not read from the store), still at j.Revision; it appends the change to its history
	// and the events to the outbox, publishing an EventRef for each on EventsTopic, in one
	// transaction (no history entry for a write in place with no reason), and sets j.Revision
	// to the stored job's new revision. ErrConflict otherwise: another worker or replica wrote
	// first. It checks no move: callers change a job's state through Move, which does.
	Update(ctx context.Context, j *Job, from State, reason string, events ...Event) error
	// Job returns one job, or ErrNotFound.
	Job(ctx context.Context, id string) (*Job, error)
	// Jobs lists jobs matching f, oldest first (ties in the order they were added).
	Jobs(ctx context.Context, f JobFilter) ([]Job, error)
	// History returns a job's changes, oldest first.
	History(ctx context.Context, id string) ([]Change, error)
	// Counts returns how many jobs are in each state.
	Counts(ctx context.Context) (map[State]int, error)
	// PendingEvents returns up to limit outbox events the relay has not fanned out yet, oldest
	// first.
	PendingEvents(ctx context.Context, limit int) ([]Event, error)
	// InstanceID returns this installation's id, created on first use.
	InstanceID(ctx context.Context) (string, error)
	// NoteMappingChange records that who owns what may have changed (bindings made upstream by
	// identities apply, authors set by hand): it moves the mapping generation on by one, with
	// reason and now, and returns the new state. Every process using the store sees it.
	NoteMappingChange(ctx context.Context, reason string, now time.Time) (MappingChange, error)
	// LastMappingChange returns the latest recorded mapping change (Generation 0 before any).
	// It is cheap: bridge run polls it every few seconds.
	LastMappingChange(ctx context.Context) (MappingChange, error)
	LeaseStore
}

// LeaseStore hands out named leases, so that of several replicas on one store one at a time
// does a thing that must not run twice at once: scan a source and move its cursor, track
// completions, request reports.
type LeaseStore interface {
	// Lease takes the lease name for holder until now+ttl, or renews it when holder has it
	// already. It reports whether holder has it now: false while another holder's lease runs
	// (until is after now).
	Lease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	// Release gives the lease up when holder has it (nothing otherwise), so another replica
	// may take it at once.
	Release(ctx context.Context, name, holder string) error
	// Leases lists the leases, held or run out, by name.
	Leases(ctx context.Context) ([]Lease, error)
}

// Lease is one named lease: who holds it until when.
type Lease struct {
	// Name is what the lease guards ("source:zoom", "tracker").
	Name string `json:"name"`
	// Holder is the replica that took it last (Pipeline.Replica).
	Holder string `json:"holder"`
	// Until is when it runs out unless renewed.
	Until time.Time `json:"until"`
}

// DeliveryStore keeps webhook deliveries, their attempts and the endpoints' state: what the
// relay uses.
type DeliveryStore interface {
	// FanOut creates one pending delivery of the event per endpoint (unique on event and
	// endpoint, so a redelivered message adds nothing), each with a fresh webhook-id from
	// NewWebhookID, and marks the event handed on, in one transaction. It fails with
	// ErrUnknownEvent when the outbox has no such event.
	FanOut(ctx context.Context, ref EventRef, endpoints []string, now time.Time) error
	// Abandon turns the pending deliveries of endpoints not in known into dead letters (an
	// endpoint removed from the configuration).
	Abandon(ctx context.Context, known []string, now time.Time) (int, error)
	// Claim leases up to limit due deliveries of endpoint (all endpoints when empty) that is
	// enabled, each the oldest pending one of its job at its endpoint (per-transcription order),
	// until now+lease, and returns them with LeaseUntil set to it.
	Claim(ctx context.Context, endpoint string, now time.Time, lease time.Duration, limit int) ([]Delivery, error)
	// Record stores an attempt (under d.Endpoint: d is the delivery as claimed) and the
	// delivery's new state (status, attempts, next attempt), and frees its lease. When d.LeaseUntil is set and the delivery is no longer under that
	// claim (its lease ran out and another relay claimed it, or it was recorded since), the
	// attempt is kept but the state is not, and Record returns ErrConflict: the newer claim
	// decides. ErrDeliveryNotFound for an unknown delivery.
	Record(ctx context.Context, d *Delivery, a Attempt) error
	// BatchCommitter's Commit does Record, FanOut and Claim for many items in one transaction:
	// the relay's group commit.
	BatchCommitter
	// Deliveries lists deliveries matching f, newest first.
	Deliveries(ctx context.Context, f DeliveryFilter) ([]Delivery, error)
	// Delivery returns one delivery with its attempts, or ErrDeliveryNotFound.
	Delivery(ctx context.Context, id string) (*Delivery, []Attempt, error)
	// Replay makes matching deliveries pending again, due now, keeping their webhook-id and a
	// lease still running (an attempt in flight records its outcome; nothing is sent twice at
	// once). It returns how many it changed.
	Replay(ctx context.Context, ids []string, f DeliveryFilter, now time.Time) (int, error)
	// DisableEndpoint and EnableEndpoint switch an endpoint off (after 410) and on again;
	// DisabledEndpoints says which are off and why. DisableEndpoint decides the transition
	// atomically: on an endpoint already disabled it changes nothing and emits no event, so
	// several deliveries answered 410 at once, on one replica or several, make one
	// endpoint.disabled.
	DisableEndpoint(ctx context.Context, name, reason string, now time.Time, events ...Event) error
	EnableEndpoint(ctx context.Context, name string) error
	DisabledEndpoints(ctx context.Context) (map[string]string, error)
	// EndpointAttempts returns the newest attempts (at most limit) of endpoint's deliveries,
	// newest first, whatever state the deliveries are in now.
	EndpointAttempts(ctx context.Context, endpoint string, limit int) ([]EndpointAttempt, error)
}

// ExportStore keeps scheduled export runs and checkpoints, and the named leases that keep one
// run of an export at a time across replicas (export:<name>): what the exporter uses.
type ExportStore interface {
	LeaseStore
	// ClaimRun reserves (export, tick) until now+lease: true when the row is new (INSERT … ON
	// CONFLICT DO NOTHING), or failed, or running with its lease run out (a killed runner).
	ClaimRun(ctx context.Context, export string, tick, now time.Time, lease time.Duration) (bool, error)
	// RenewRun extends to until the lease of a run still running under held (the lease its
	// runner claimed or last renewed: now+lease of ClaimRun). ErrConflict when it is not: the
	// run was claimed again after its lease ran out (this runner was paused), or finished.
	RenewRun(ctx context.Context, export string, tick, held, until time.Time) error
	// FinishRun stores r's outcome, the ids it exported, the event and, when advanceTo is set,
	// moves the export's checkpoint forward to it, in one transaction. When r.LeaseUntil is
	// set, only a run still running under that lease is finished; ErrConflict otherwise (a
	// newer claim decides), and nothing is written.
	FinishRun(ctx context.Context, r ExportRun, ids []string, advanceTo time.Time, ev Event) error
	// Exported returns which of ids the export has already written in a finished run.
	Exported(ctx context.Context, export string, ids []string) (map[string]bool, error)
	// Checkpoint returns where the next run starts; ok is false before the first run.
	Checkpoint(ctx context.Context, export string) (time.Time, bool, error)
	// Runs lists runs, newest first (all exports when export is empty).
	Runs(ctx context.Context, export string, limit int) ([]ExportRun, error)
	// LastTick returns the latest tick with a run of export.
	LastTick(ctx context.Context, export string) (time.Time, bool, error)
	// SourceOf returns the bridge source a transcription was uploaded from ("" when unknown).
	SourceOf(ctx context.Context, transcriptionID string) (string, error)
}

// Store is the whole store contract: one database keeps jobs, deliveries, export runs, the
// audit log and the tombstones of forgotten jobs.
// Implementations: bridge/sqlite (the embedded default); every one passes bridge/storetest.
type Store interface {
	JobStore
	DeliveryStore
	ExportStore
	AuditStore
	EndpointAlertStore
	PrivacyStore
	// Close releases the store.
	Close() error
}
