package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestExportSurvivesSIGKILL: `bridge export run` killed with SIGKILL after its first archive,
// then run again: the folder holds every transcript once, in archives the manifest lists, and
// nothing half-written.
func TestExportSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bridge as a child process")
	}
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		o.TimeScale, o.DataRate = 0.0005, 1000000
		o.Seed.Workspaces[0].Limits.Concurrency = 50
		o.Seed.Workspaces[0].BalanceMinutes = 100000
	})
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey, DataPerMinute: 1000000})
	start := time.Now().UTC().Add(-time.Minute)
	var wg sync.WaitGroup
	ids := make([]string, 250)
	for i := range ids {
		wg.Go(func() {
			data := wavBytes(2, uint32(i+1))
			res, err := c.Upload(context.Background(), api.UploadParams{Filename: fmt.Sprintf("call-%03d.wav", i), Size: int64(len(data)), Body: bytes.NewReader(data)})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = res.UUID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if _, err := c.Wait(context.Background(), id, api.WaitOptions{PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "exports")
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q}
store: {dsn: %q}
replica: {lease: 2s}
sources: [{name: inbox, type: localdir, path: %q}]
exports:
  - {name: nightly, schedule: "0 2 * * *", format: md, layout: zip, destination: %q, since: %q}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), dir, out, start.Format(time.RFC3339)), 0o644)

	if code, out, errs := cli("export", "run", "nightly", "--dry-run", "--config", config); code != 0 || !strings.Contains(out, "250 transcript(s)") {
		t.Fatalf("export run --dry-run = %d\n%s%s", code, out, errs)
	}
	killAtWith(t, config, "export-archive", "export", "run", "nightly")
	if _, err := os.Stat(filepath.Join(out, export.ManifestName)); err == nil {
		t.Fatal("a manifest exists after the kill: the run cannot have finished")
	}
	cmd, lines := bridgeProcess(t, config, "", "export", "run", "nightly", "--until", time.Now().UTC().Add(time.Minute).Format(time.RFC3339))
	var stderr strings.Builder
	for lines.Scan() {
		stderr.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("second export run: %v\n%s", err, tail(stderr.String(), 10))
	}
	b, err := os.ReadFile(filepath.Join(out, export.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m export.Manifest
	json.Unmarshal(b, &m)
	seen := map[string]int{}
	for _, tr := range m.Transcripts {
		seen[tr.ID]++
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("transcription %s is in the manifest %d times, want once", id, seen[id])
		}
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(entries) != len(m.Archives)+1 {
		t.Errorf("the folder holds %v; want the %d archives of the manifest and the manifest only", names, len(m.Archives))
	}
	code, list, _ := cli("export", "list", "nightly", "--config", config)
	if code != 0 || strings.Count(list, "completed") != 1 || !strings.Contains(list, "250") {
		t.Errorf("export list = %d\n%s", code, list)
	}
}
