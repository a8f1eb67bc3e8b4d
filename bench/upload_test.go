package bench

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestUpload runs the upload workload in its short form (64 MiB) and checks its figures.
func TestUpload(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: it is the upload workload's reference")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Upload(ctx, Env{Dir: t.TempDir(), Short: true, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, map[string]string{"upload_throughput": "MiB/s", "upload_peak_rss": "MiB"})
	got := map[string]Result{}
	for _, r := range rep.Results {
		got[r.Name] = r
		if r.Value <= 0 {
			t.Errorf("%s = %v, want > 0", r.Name, r.Value)
		}
	}
	if r := got["upload_throughput"]; r.Reference == nil || *r.Reference <= 0 || r.Ratio == nil || r.ReferenceName != "curl -T" {
		t.Errorf("upload_throughput has no curl -T reference: %+v", r)
	}
	if r := got["upload_peak_rss"]; r.Reference != nil {
		t.Errorf("upload_peak_rss has a reference: %+v", r)
	}
}
