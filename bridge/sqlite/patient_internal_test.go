package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/mattn/go-sqlite3"
)

// TestPatient checks that an operator's write is tried again while SQLite answers "database is
// locked", up to patientTries times, and that any other outcome ends it.
func TestPatient(t *testing.T) {
	busy := sqlite3.Error{Code: sqlite3.ErrBusy}
	other := errors.New("no such table: endpoint_state")
	tests := []struct {
		name      string
		errs      []error // fn's answers, in turn
		wantCalls int
		wantErr   error
	}{
		{"done at once", []error{nil}, 1, nil},
		{"busy, then done", []error{busy, nil}, 2, nil},
		{"busy throughout", []error{busy, busy, busy, busy}, patientTries, busy},
		{"another error", []error{other, nil}, 1, other},
	}
	for _, tt := range tests {
		calls := 0
		err := patient(context.Background(), func() error {
			calls++
			return tt.errs[calls-1]
		})
		if calls != tt.wantCalls || !errors.Is(err, tt.wantErr) && err != tt.wantErr {
			t.Errorf("%s: patient called fn %d times and returned %v, want %d times and %v", tt.name, calls, err, tt.wantCalls, tt.wantErr)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	if err := patient(ctx, func() error { calls++; return busy }); calls != 1 || !isBusy(err) {
		t.Errorf("cancelled: patient called fn %d times and returned %v, want once and the busy error", calls, err)
	}
}
