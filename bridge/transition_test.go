package bridge

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestTransitions: every pair of states is allowed exactly when the state machine has the move:
// the main line discovered → ready → uploading → queued → processing → transcribed → done, the
// side states, the moves the pipeline makes and release by hand; every state may end deleted
// (forgotten, or gone upstream), skipped and failed only so, and nothing leaves deleted.
func TestTransitions(t *testing.T) {
	allowed := map[[2]State]string{
		{StateDiscovered, StateReady}:        "mapped",
		{StateDiscovered, StateHeld}:         "no member matches the owner",
		{StateDiscovered, StateSkipped}:      "the service would refuse it, or a template fails",
		{StateReady, StateUploading}:         "a key stored before the first attempt",
		{StateReady, StateHeld}:              "no minutes left",
		{StateUploading, StateUploading}:     "a retry with the same key, or a new key past the window",
		{StateUploading, StateQueued}:        "accepted, or adopted from upstream",
		{StateUploading, StateHeld}:          "402, a setting refused, the source keeps failing",
		{StateUploading, StateSkipped}:       "the file will never be taken",
		{StateUploading, StateFailed}:        "refused for good, or found failed upstream",
		{StateUploading, StateDiscovered}:    "author_not_member: mapped again, once",
		{StateQueued, StateQueued}:           "author reassigned",
		{StateQueued, StateProcessing}:       "listed processing",
		{StateQueued, StateTranscribed}:      "completed, reports pending",
		{StateQueued, StateDone}:             "completed with every report",
		{StateQueued, StateFailed}:           "failed",
		{StateQueued, StateResubmit}:         "insufficient_balance",
		{StateProcessing, StateProcessing}:   "author reassigned",
		{StateProcessing, StateTranscribed}:  "completed, reports pending",
		{StateProcessing, StateDone}:         "completed with every report",
		{StateProcessing, StateFailed}:       "failed",
		{StateProcessing, StateResubmit}:     "insufficient_balance",
		{StateTranscribed, StateTranscribed}: "a report quota waits, or author reassigned",
		{StateTranscribed, StateDone}:        "every report final",
		{StateTranscribed, StateFailed}:      "a report request refused for good",
		{StateDone, StateDone}:               "author reassigned",
		{StateHeld, StateHeld}:               "rechecked, rescheduled",
		{StateHeld, StateReady}:              "an owner maps now",
		{StateHeld, StateSkipped}:            "mapped, and refused",
		{StateHeld, StateUploading}:          "tried again (minutes, a setting, the source)",
		{StateHeld, StateDiscovered}:         "released by hand with an author",
		{StateResubmit, StateResubmit}:       "balance rechecked",
		{StateResubmit, StateUploading}:      "the balance covers it: a new key",
		{StateDeleted, StateDeleted}:         "forget scrubs a job deleted upstream",
	}
	for _, from := range States {
		if from != StateDeleted {
			allowed[[2]State{from, StateDeleted}] = "forgotten, or deleted upstream"
		}
	}
	if len(Transitions) != len(States) {
		t.Errorf("Transitions has %d states, want every one of the %d", len(Transitions), len(States))
	}
	for _, from := range States {
		for _, to := range States {
			why, want := allowed[[2]State{from, to}]
			if got := CanMove(from, to); got != want {
				t.Errorf("CanMove(%s, %s) = %v, want %v %s", from, to, got, want, why)
			}
		}
	}
	for _, s := range []State{StateSkipped, StateFailed} {
		if len(Transitions[s]) != 1 || Transitions[s][0] != StateDeleted {
			t.Errorf("Transitions[%s] = %v, want only deleted: it is final but for forget", s, Transitions[s])
		}
	}
	if CanMove("", StateDiscovered) || CanMove(StateDiscovered, "bogus") {
		t.Error("CanMove allows an unknown state")
	}
}

// fakeJobs is a JobStore that records Update calls and answers with err.
type fakeJobs struct {
	JobStore
	updates []string
	err     error
}

func (f *fakeJobs) Update(_ context.Context, j *Job, from State, reason string, events ...Event) error {
	f.updates = append(f.updates, fmt.Sprintf("%s %s→%s %q hold=%q events=%d", j.ID, from, j.State, reason, j.Hold, len(events)))
	return f.err
}

// TestMove: Move writes allowed moves, refuses the others with ErrIllegalTransition and writes
// nothing, holds only with a hold reason, clears it on leaving held, keeps the reason of a move
// in place with nothing to say, and leaves the job as it was when the store refuses.
func TestMove(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		job        Job
		to         State
		reason     string
		storeErr   error
		wantErr    error
		wantState  State
		wantReason string
		wantHold   HoldReason
		wantWrite  string
	}{
		{name: "main line", job: Job{ID: "j", State: StateDiscovered}, to: StateReady,
			wantState: StateReady, wantWrite: `j discovered→ready "" hold="" events=0`},
		{name: "illegal", job: Job{ID: "j", State: StateDone, Reason: "ok"}, to: StateUploading, reason: "again",
			wantErr: ErrIllegalTransition, wantState: StateDone, wantReason: "ok"},
		{name: "out of a final state", job: Job{ID: "j", State: StateFailed, Reason: "gone"}, to: StateDiscovered,
			wantErr: ErrIllegalTransition, wantState: StateFailed, wantReason: "gone"},
		{name: "held without a hold reason", job: Job{ID: "j", State: StateReady}, to: StateHeld, reason: "why?",
			wantErr: ErrIllegalTransition, wantState: StateReady},
		{name: "held with one", job: Job{ID: "j", State: StateReady, Hold: HoldNoBalance}, to: StateHeld, reason: "no minutes",
			wantState: StateHeld, wantReason: "no minutes", wantHold: HoldNoBalance, wantWrite: `j ready→held "no minutes" hold="no_balance" events=0`},
		{name: "leaving held clears it", job: Job{ID: "j", State: StateHeld, Hold: HoldUnmapped, Reason: "unmapped: x"}, to: StateDiscovered, reason: "released",
			wantState: StateDiscovered, wantReason: "released", wantWrite: `j held→discovered "released" hold="" events=0`},
		{name: "in place, nothing to say", job: Job{ID: "j", State: StateHeld, Hold: HoldUnmapped, Reason: "unmapped: x"}, to: StateHeld,
			wantState: StateHeld, wantReason: "unmapped: x", wantHold: HoldUnmapped, wantWrite: `j held→held "" hold="unmapped" events=0`},
		{name: "a secret in the reason is hidden before it is kept", job: Job{ID: "j", State: StateUploading}, to: StateFailed,
			reason:    "download https://z/r?access_token=abc.def: 401 for key mk_live_abcdefghijklmnop1234",
			wantState: StateFailed, wantReason: "download https://z/r?access_token=[redacted] 401 for key mk_live_[redacted]",
			wantWrite: `j uploading→failed "download https://z/r?access_token=[redacted] 401 for key mk_live_[redacted]" hold="" events=0`},
		{name: "the store refuses", job: Job{ID: "j", State: StateHeld, Hold: HoldUnmapped, Reason: "unmapped: x"}, to: StateReady, reason: "mapped",
			storeErr: ErrConflict, wantErr: ErrConflict, wantState: StateHeld, wantReason: "unmapped: x", wantHold: HoldUnmapped,
			wantWrite: `j held→ready "mapped" hold="" events=0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &fakeJobs{err: tc.storeErr}
			j := tc.job
			err := Move(ctx, s, &j, tc.to, tc.reason, now)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("Move(%s → %s) = %v, want %v", tc.job.State, tc.to, err, tc.wantErr)
			}
			var te *TransitionError
			if errors.Is(tc.wantErr, ErrIllegalTransition) && (!errors.As(err, &te) || te.From != tc.job.State || te.To != tc.to || te.Job != "j") {
				t.Errorf("Move(%s → %s) = %#v, want a *TransitionError naming the job, from and to", tc.job.State, tc.to, err)
			}
			if j.State != tc.wantState || j.Reason != tc.wantReason || j.Hold != tc.wantHold {
				t.Errorf("job after Move = %s %q hold %q, want %s %q hold %q", j.State, j.Reason, j.Hold, tc.wantState, tc.wantReason, tc.wantHold)
			}
			var wantWrites []string
			if tc.wantWrite != "" {
				wantWrites = []string{tc.wantWrite}
			}
			if fmt.Sprint(s.updates) != fmt.Sprint(wantWrites) {
				t.Errorf("store writes = %q, want %q", s.updates, wantWrites)
			}
		})
	}
}
