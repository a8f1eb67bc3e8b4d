package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
	"github.com/transcript-bridge/bridge/connectors/meet/meettest"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestMeetRecordingsOnceThroughBothSources (issue 34): a Meet organizer's recordings made
// before Google moved them (in "Meet Recordings", since renamed) and after (in "Google Meet",
// a participant holding a shortcut), reached through a gdrive source (meet_recordings, the
// organizer and the participant as subjects) and a meet source (both users) at once, with the
// sandbox as the service: each recording is one job and one upload, with its Drive file's
// external id; a second run uploads nothing.
func TestMeetRecordingsOnceThroughBothSources(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	drv := gdrivetest.Start(t)
	mt := meettest.Start(t, drv)
	const sam, kim = "sam@acme.test", "kim@acme.test"
	now := time.Now().UTC()
	before := mt.Meeting(sam, []string{kim}, now.Add(-72*time.Hour), now.Add(-71*time.Hour))
	_, old := mt.RecordToDrive(before, gdrivetest.LegacyLayout, "Kickoff", mediatest.MP4(5, 1))
	drv.SwitchMeetLayout(sam)
	after := mt.Meeting(sam, []string{kim}, now.Add(-24*time.Hour), now.Add(-23*time.Hour))
	_, recent := mt.RecordToDrive(after, gdrivetest.FolderLayout, "Standup", mediatest.MP4(5, 2))

	dir := t.TempDir()
	creds := filepath.Join(dir, "sa.json")
	os.WriteFile(creds, drv.ServiceAccountJSON(), 0o600)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources:
  - name: drive
    type: gdrive
    credentials_file: %[4]q
    subjects: [%[5]s, %[6]s]
    meet_recordings: true
    endpoint: %[7]q
    author: "email:sam@acme.test"
  - name: meet
    type: meet
    credentials_file: %[4]q
    users: [%[6]s, %[5]s]
    api_url: %[8]q
    drive_url: %[7]q
    author: "email:sam@acme.test"
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), creds, sam, kim, drv.URL, mt.URL), 0o644)

	runOnce(t, config)
	got := completed(t, sb.URL)
	for _, id := range []string{old, recent} {
		if _, ok := got["gdrive:"+id]; !ok {
			t.Errorf("no transcript of gdrive:%s (got %v)", id, slices.Collect(keysOf(got)))
		}
	}
	if n := uploads(t, sb); n != 2 || len(got) != 2 {
		t.Errorf("%d uploads, %d transcriptions; want 2 and 2: one per recording whichever sources and users reached it", n, len(got))
	}
	code, out, errs := cli("jobs", "list", "-o", "json", "--config", config)
	var jobs struct {
		Items []struct {
			Source string `json:"source"`
			ItemID string `json:"item_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &jobs); code != 0 || err != nil || len(jobs.Items) != 2 {
		t.Errorf("jobs list = %d %v\n%s%s; want 2 jobs", code, err, out, errs)
	}
	runOnce(t, config)
	if n := uploads(t, sb); n != 2 {
		t.Errorf("a second run: %d uploads in all, want still 2", n)
	}
	if code, out, errs := cli("sources", "check", "meet", "--config", config); code != 0 || !strings.Contains(out, "Meet conference records readable") {
		t.Errorf("sources check meet = %d\n%s%s", code, out, errs)
	}
}

// keysOf yields m's keys.
func keysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
