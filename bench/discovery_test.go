package bench

import (
	"context"
	"strings"
	"testing"
)

// TestDiscovery runs the discovery workload small (5,000 objects, 1,000 files) and checks its
// figures: every one named, in its unit, the timings positive and the re-scans quiet.
func TestDiscovery(t *testing.T) {
	rep, err := Discovery(context.Background(), Env{Dir: t.TempDir(), Short: true, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, map[string]string{
		"s3_discovery": "s", "s3_rescan_queued": "objects", "s3_rescan_object_requests": "requests", "s3_discovery_peak_rss": "MiB",
		"drive_discovery": "s", "drive_rescan_queued": "files", "drive_rescan_file_requests": "requests",
	})
	for _, r := range rep.Results {
		switch r.Name {
		case "s3_rescan_queued", "s3_rescan_object_requests", "drive_rescan_queued", "drive_rescan_file_requests":
			if r.Value != 0 || !r.Pass {
				t.Errorf("%s = %v, want 0", r.Name, r.Value)
			}
		default:
			if r.Value <= 0 {
				t.Errorf("%s = %v, want > 0", r.Name, r.Value)
			}
		}
		if (r.Name == "s3_discovery" || r.Name == "drive_discovery") && (r.Reference == nil || *r.Reference <= 0) {
			t.Errorf("%s has reference %v, want a positive one", r.Name, r.Reference)
		}
	}
}

// checkFigures fails t unless rep holds exactly the figures of units (name → unit).
func checkFigures(t *testing.T, rep *Report, units map[string]string) {
	t.Helper()
	if len(rep.Results) != len(units) {
		t.Errorf("%d figures, want %d: %+v", len(rep.Results), len(units), rep.Results)
	}
	for _, r := range rep.Results {
		if want, ok := units[r.Name]; !ok || r.Unit != want {
			t.Errorf("figure %s in %q, want one of %v", r.Name, r.Unit, units)
		}
		t.Logf("%s = %.3g %s (goal %s, pass %v)", r.Name, r.Value, r.Unit, r.Goal, r.Pass)
	}
}

// testLog is Env.Log writing to t.Log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
