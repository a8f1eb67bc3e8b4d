package bridge

import (
	"testing"
	"time"
)

func TestExportRunState(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		run  ExportRun
		want ExportStatus
	}{
		{ExportRun{Status: ExportRunning, LeaseUntil: now.Add(time.Minute)}, ExportRunning},
		{ExportRun{Status: ExportRunning, LeaseUntil: now.Add(-time.Minute)}, ExportInterrupted},
		{ExportRun{Status: ExportCompleted}, ExportCompleted},
		{ExportRun{Status: ExportFailed}, ExportFailed},
	} {
		if got := tc.run.State(now); got != tc.want {
			t.Errorf("ExportRun{%s, lease %v}.State = %q, want %q", tc.run.Status, tc.run.LeaseUntil.Sub(now), got, tc.want)
		}
	}
}
