package bridge

import (
	"context"
	"errors"
	"time"
)

// ErrConflict is returned by Store.Update when the job is no longer in the expected state:
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

// Store keeps jobs, cursors, history and the outbox. Implementations: bridge/sqlite (the
// embedded default); every one passes bridge/storetest.
type Store interface {
	// AddRecordings stores a discovered job for each recording not seen before (unique on
	// source, item and version) and sets the source's cursor, in one transaction. It returns
	// the jobs it created; a second sighting is a no-op.
	AddRecordings(ctx context.Context, source string, recs []Recording, cursor string, now time.Time) ([]Job, error)
	// Cursor returns the source's cursor ("" before the first scan).
	Cursor(ctx context.Context, source string) (string, error)
	// Update writes j if the stored job is still in state from, appends the change to its
	// history and the events to the outbox, publishing an EventRef for each on EventsTopic,
	// in one transaction. ErrConflict otherwise.
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
	// Close releases the store.
	Close() error
}
