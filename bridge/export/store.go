package export

import (
	"context"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Run statuses.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Run is one export run: a tick's window written to one location.
type Run struct {
	Export     string    `json:"export"`
	Tick       time.Time `json:"tick"`
	Status     string    `json:"status"`
	From       time.Time `json:"from"`
	Until      time.Time `json:"until"`
	Location   string    `json:"location"`
	Listed     int       `json:"listed"`
	Exported   int       `json:"exported"`
	Skipped    int       `json:"skipped"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// LeaseUntil is how long a running run is reserved; past it, its runner is gone.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// State is the status to show at now: a running run whose lease ran out was interrupted (its
// window is taken by the next run, or by a catch-up of the same tick).
func (r Run) State(now time.Time) string {
	if r.Status == StatusRunning && !r.LeaseUntil.IsZero() && now.After(r.LeaseUntil) {
		return "interrupted"
	}
	return r.Status
}

// Store keeps runs and checkpoints; bridge/sqlite implements it.
type Store interface {
	// ClaimRun reserves (export, tick) until now+lease: true when the row is new (INSERT … ON
	// CONFLICT DO NOTHING), or failed, or running with its lease run out (a killed runner).
	ClaimRun(ctx context.Context, export string, tick, now time.Time, lease time.Duration) (bool, error)
	// RenewRun extends a claimed run's lease.
	RenewRun(ctx context.Context, export string, tick, until time.Time) error
	// FinishRun stores r's outcome, the ids it exported, the event and, when advanceTo is set,
	// moves the export's checkpoint forward to it, in one transaction.
	FinishRun(ctx context.Context, r Run, ids []string, advanceTo time.Time, ev bridge.Event) error
	// Exported returns which of ids the export has already written in a finished run.
	Exported(ctx context.Context, export string, ids []string) (map[string]bool, error)
	// Checkpoint returns where the next run starts; ok is false before the first run.
	Checkpoint(ctx context.Context, export string) (time.Time, bool, error)
	// Runs lists runs, newest first (all exports when export is empty).
	Runs(ctx context.Context, export string, limit int) ([]Run, error)
	// LastTick returns the latest tick with a run of export.
	LastTick(ctx context.Context, export string) (time.Time, bool, error)
	// SourceOf returns the bridge source a transcription was uploaded from ("" when unknown).
	SourceOf(ctx context.Context, transcriptionID string) (string, error)
}
