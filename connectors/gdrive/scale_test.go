package gdrive_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/transcript-bridge/bridge/bench"
)

// scaleFiles is how many files the discovery test lists: GDRIVE_SCALE_FILES, else 10,000
// (1,000 with -short).
func scaleFiles(t *testing.T) int {
	if v := os.Getenv("GDRIVE_SCALE_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("GDRIVE_SCALE_FILES=%q: %v", v, err)
		}
		return n
	}
	if testing.Short() {
		return 1000
	}
	return 10000
}

// TestDiscoveryAtScale runs the Drive half of the bench's discovery workload over
// GDRIVE_SCALE_FILES files (default 10,000) in a folder of the Drive fake with 20 ms added to
// every request: the pipeline scans them into a store (every file found from the listing
// alone, without a request per file, or the workload fails), then scans again through the changes feed and
// once more as the periodic full pass. It asserts what does not depend on the machine: the
// re-scans queue nothing and make no request per file.
func TestDiscoveryAtScale(t *testing.T) {
	results, err := bench.DriveDiscovery(context.Background(), bench.Env{Dir: t.TempDir(), Log: io.Discard}, scaleFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%s = %.3g %s (goal %s)", r.Name, r.Value, r.Unit, r.Goal)
		if (r.Name == "drive_rescan_queued" || r.Name == "drive_rescan_file_requests") && r.Value != 0 {
			t.Errorf("%s = %v, want 0", r.Name, r.Value)
		}
	}
}
