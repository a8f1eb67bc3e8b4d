package bridge

import (
	"github.com/transcript-bridge/bridge/api"

	"context"
	"errors"
	"fmt"
	"time"
)

// ErrIllegalTransition is wrapped by the error of a move the state machine does not allow
// (a *TransitionError naming the job, from and to).
var ErrIllegalTransition = errors.New("illegal state transition")

// TransitionError refuses a move from one state to another that Transitions does not list,
// or a move into held without a hold reason.
type TransitionError struct {
	Job      string
	From, To State
	// Why is set when the move itself is allowed but the job is not fit for it.
	Why string
}

func (e *TransitionError) Error() string {
	msg := fmt.Sprintf("job %s: %s → %s is not a move of the job state machine", e.Job, e.From, e.To)
	if e.Why != "" {
		msg = fmt.Sprintf("job %s: %s → %s: %s", e.Job, e.From, e.To, e.Why)
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrIllegalTransition) hold.
func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }

// Transitions lists, for each state, the states a job in it may move to (see design.md's state
// machine; a store adds a job in discovered). A state listed as its own target may be written
// again in place: rescheduled (NextAt), a retry with the same key, a recheck of the balance, an
// author reassigned by hand. Every state may move to deleted (forgotten, or gone upstream);
// skipped and failed move only there, and deleted is final.
var Transitions = map[State][]State{
	// Mapped, held until an owner maps, or refused before any byte is sent.
	StateDiscovered: {StateReady, StateHeld, StateSkipped, StateDeleted},
	// A key is stored before the first attempt; no minutes left holds it.
	StateReady: {StateUploading, StateHeld, StateDeleted},
	// Accepted (or adopted), retried with the same key, held (no minutes, the source keeps
	// failing, a setting refused), refused for good, or back to mapping once when the service
	// refused the author.
	StateUploading: {StateUploading, StateQueued, StateHeld, StateSkipped, StateFailed, StateDiscovered, StateDeleted},
	// The tracker's outcomes; in place: the author reassigned.
	StateQueued:     {StateQueued, StateProcessing, StateTranscribed, StateDone, StateFailed, StateResubmit, StateDeleted},
	StateProcessing: {StateProcessing, StateTranscribed, StateDone, StateFailed, StateResubmit, StateDeleted},
	// The reporter's outcomes; in place: waiting for a report quota, the author reassigned.
	StateTranscribed: {StateTranscribed, StateDone, StateFailed, StateDeleted},
	// In place: the author reassigned; deleted: forgotten, or gone upstream (an export's read).
	StateDone: {StateDone, StateDeleted},
	// Rechecked in place, mapped (ready) or refused (skipped) once an owner maps, uploaded again,
	// or released by hand with an author (discovered: mapped on the next step).
	StateHeld: {StateHeld, StateReady, StateSkipped, StateUploading, StateDiscovered, StateDeleted},
	// Rechecked in place until the balance covers it, then uploaded with a new key.
	StateResubmit: {StateResubmit, StateUploading, StateDeleted},
	// Skipped and failed jobs move only when forgotten (bridge forget).
	StateSkipped: {StateDeleted},
	StateFailed:  {StateDeleted},
	// Final; in place only: forget scrubbing a job deleted upstream (no event, no history).
	StateDeleted: {StateDeleted},
}

// CanMove reports whether Transitions allows a job in from to move to to.
func CanMove(from, to State) bool {
	for _, s := range Transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Move is the one way a job changes state: it checks the move against Transitions (a
// *TransitionError wrapping ErrIllegalTransition otherwise, nothing written), sets j's state,
// reason and time, and writes j through s.Update with the events, compared with the state j was
// in (ErrConflict when another worker moved it first). A job moves into held only with a hold
// reason (j.Hold) and leaves it without one. A move in place with no reason keeps the job's
// reason and writes no history: a reschedule with nothing new to say. On error, j's state,
// reason and hold are as they were.
func Move(ctx context.Context, s JobStore, j *Job, to State, reason string, now time.Time, events ...Event) error {
	from, was, hold := j.State, j.Reason, j.Hold
	if !CanMove(from, to) {
		return &TransitionError{Job: j.ID, From: from, To: to}
	}
	if to == StateHeld && j.Hold == "" {
		return &TransitionError{Job: j.ID, From: from, To: to, Why: "a job is held only with a hold reason"}
	}
	if to != StateHeld {
		j.Hold = ""
	}
	// Reasons quote upstream and source errors; whatever secret one carries (a key, a token in
	// a URL) is hidden here, once, before the store keeps it or an event repeats it.
	reason = api.Redact(reason)
	if from != to || reason != "" {
		j.Reason = reason
	}
	j.State, j.UpdatedAt = to, now
	for i := range events {
		events[i].TranscriptionID = j.TranscriptionID
	}
	if err := s.Update(ctx, j, from, reason, events...); err != nil {
		j.State, j.Reason, j.Hold = from, was, hold
		return err
	}
	return nil
}
