package export

import (
	"testing"
	"time"
)

func TestRunState(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		run  Run
		want string
	}{
		{Run{Status: StatusRunning, LeaseUntil: now.Add(time.Minute)}, StatusRunning},
		{Run{Status: StatusRunning, LeaseUntil: now.Add(-time.Minute)}, "interrupted"},
		{Run{Status: StatusCompleted}, StatusCompleted},
		{Run{Status: StatusFailed}, StatusFailed},
	} {
		if got := tc.run.State(now); got != tc.want {
			t.Errorf("Run{%s, lease %v}.State = %q, want %q", tc.run.Status, tc.run.LeaseUntil.Sub(now), got, tc.want)
		}
	}
}
