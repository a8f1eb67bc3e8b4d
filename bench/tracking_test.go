package bench

import (
	"context"
	"testing"
)

// TestTracking runs the tracking workload small (100 in flight) and checks its figures: named,
// in their units, positive, and the requests' reference one GET per transcription per poll.
func TestTracking(t *testing.T) {
	rep, err := Tracking(context.Background(), Env{Dir: t.TempDir(), Short: true, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, map[string]string{"tracking_requests": "requests/min", "tracking_lag_p95": "s", "tracking_lag_p50": "s"})
	for _, r := range rep.Results {
		if r.Value <= 0 {
			t.Errorf("%s = %v, want > 0", r.Name, r.Value)
		}
		if r.Name == "tracking_requests" && (r.Reference == nil || *r.Reference != 1200) {
			t.Errorf("tracking_requests reference = %v, want 1200 (100 GETs every 5 s)", r.Reference)
		}
	}
}
