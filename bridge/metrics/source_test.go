package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/transcript-bridge/bridge/bridge/metrics"
)

// TestSourceUp (issue 31, point 5): bridge_source_scan_errors_total starts at 0 for each
// configured source; a failed scan sets bridge_source_up to 0 and counts one error, a scan that
// succeeds sets it back to 1.
func TestSourceUp(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Options{Sources: []string{"inbox"}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when, want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "bridge_source_up", "bridge_source_scan_errors_total"); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	const errorsHelp = `# HELP bridge_source_scan_errors_total Scans of the source that failed in this process: the source could not be listed (a folder gone, credentials refused, a listing that failed).
# TYPE bridge_source_scan_errors_total counter
`
	const upHelp = `# HELP bridge_source_up 1 when this process's last scan of the source succeeded, 0 when it failed (absent before this process scans the source).
# TYPE bridge_source_up gauge
`
	check("at start", errorsHelp+`bridge_source_scan_errors_total{source="inbox"} 0
`)
	m.ScanFailed("inbox")
	m.ScanFailed("inbox")
	check("after two failed scans", errorsHelp+`bridge_source_scan_errors_total{source="inbox"} 2
`+upHelp+`bridge_source_up{source="inbox"} 0
`)
	m.Scanned("inbox", time.Now())
	check("after a scan that succeeded", errorsHelp+`bridge_source_scan_errors_total{source="inbox"} 2
`+upHelp+`bridge_source_up{source="inbox"} 1
`)
}
