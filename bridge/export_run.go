package bridge

import "time"

// ExportStatus is where a scheduled export run stands.
type ExportStatus string

// Export run statuses.
const (
	ExportRunning   ExportStatus = "running"
	ExportCompleted ExportStatus = "completed"
	ExportFailed    ExportStatus = "failed"
	// ExportInterrupted is shown, never stored: a running run whose lease ran out (its runner
	// is gone).
	ExportInterrupted ExportStatus = "interrupted"
)

// ExportRun is one run of a scheduled export: a tick's window written to one location.
type ExportRun struct {
	Export     string       `json:"export"`
	Tick       time.Time    `json:"tick"`
	Status     ExportStatus `json:"status"`
	From       time.Time    `json:"from"`
	Until      time.Time    `json:"until"`
	Location   string       `json:"location"`
	Listed     int          `json:"listed"`
	Exported   int          `json:"exported"`
	Skipped    int          `json:"skipped"`
	Error      string       `json:"error,omitempty"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at,omitzero"`
	// LeaseUntil is how long a running run is reserved; past it, its runner is gone.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// State is the status to show at now: a running run whose lease ran out was interrupted (its
// window is taken by the next run, or by a catch-up of the same tick).
func (r ExportRun) State(now time.Time) ExportStatus {
	if r.Status == ExportRunning && !r.LeaseUntil.IsZero() && now.After(r.LeaseUntil) {
		return ExportInterrupted
	}
	return r.Status
}
