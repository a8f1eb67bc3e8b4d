package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// flakyReceiver verifies every signature, fails every other request, and is down (503) for a
// stretch; it records the deliveries it accepted.
type flakyReceiver struct {
	mu        sync.Mutex
	secret    webhook.Secret
	calls     int
	downUntil time.Time
	bad       int
	// byJob lists, per job, the event types in the order they were accepted, and the
	// webhook-ids seen for each job and type.
	byJob map[string][]string
	ids   map[string]map[string]bool
	dups  int // deliveries accepted again (the same job and type)
}

func (rx *flakyReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.calls++
	if time.Now().Before(rx.downUntil) || rx.calls%2 == 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := webhook.Verify(r.Header, body, time.Now(), 0, rx.secret); err != nil {
		rx.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m struct {
		Type string `json:"type"`
		Data struct {
			JobID string `json:"job_id"`
		} `json:"data"`
	}
	json.Unmarshal(body, &m)
	key := m.Data.JobID + " " + m.Type
	if rx.ids[key] != nil {
		rx.dups++
	} else {
		rx.ids[key] = map[string]bool{}
		rx.byJob[m.Data.JobID] = append(rx.byJob[m.Data.JobID], m.Type)
	}
	rx.ids[key][r.Header.Get(webhook.HeaderID)] = true
}

func (rx *flakyReceiver) completed() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	n := 0
	for _, types := range rx.byJob {
		for _, t := range types {
			if t == "transcription.completed" {
				n++
			}
		}
	}
	return n
}

// TestRelaySurvivesCrashesAndAFlakyReceiver: 200 recordings go through `bridge run` (a child
// process) killed with SIGKILL twice right after sending a webhook and before recording it
// (the second time after the receiver accepted it), to a receiver that fails half its requests
// and is down for a while: every
// transcription.completed arrives, duplicates carry the same webhook-id, every signature
// verifies and each transcription's events arrive in order.
func TestRelaySurvivesCrashesAndAFlakyReceiver(t *testing.T) {
	t.Parallel() // child processes, mostly waiting: overlaps the other long tests
	if testing.Short() {
		t.Skip("runs the bridge as a child process")
	}
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		o.TimeScale = 0.02
		o.Seed.Workspaces[0].BalanceMinutes = 1000
		o.Seed.Workspaces[0].Limits.Concurrency = 16
		o.DataRate = 6000 // a workspace granted more than the default 500/min: the test is about the relay
	})
	secret, _ := webhook.NewSecret()
	rx := &flakyReceiver{secret: secret, byJob: map[string][]string{}, ids: map[string]map[string]bool{}}
	srv := httptest.NewServer(rx)
	defer srv.Close()

	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	const files = 200
	for i := range files {
		os.WriteFile(filepath.Join(inbox, fmt.Sprintf("call-%03d.wav", i)), wavBytes(20, uint32(i+1)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "crm.whsec"), []byte(secret.Encode()), 0o600)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, poll_interval: 1s, upload_concurrency: 10, requests_per_minute: 6000}
store: {dsn: %q}
relay: {lease: 2s, interval: 100ms}
sources:
  - {name: inbox, type: localdir, path: %q, stable_for: 0s, schedule: "@every 1s", author: "email:sam@acme.test", upload: {reports: [summary]}}
webhooks:
  - name: crm
    url: %q
    secret_file: %q
    events: [transcription.uploaded, report.completed, transcription.completed]
    allow_private: true
    retry_schedule: [200ms, 200ms, 400ms, 400ms, 800ms, 800ms, 1s, 1s, 2s, 2s, 2s, 2s]
`, sb.URL, filepath.Join(dir, "bridge.db"), inbox, srv.URL, filepath.Join(dir, "crm.whsec")), 0o644)

	rx.mu.Lock()
	rx.downUntil = time.Now().Add(3 * time.Second)
	rx.mu.Unlock()
	runUntilFailpoint(t, config, "relay-sent")
	runUntilFailpoint(t, config, "relay-accepted")

	cmd, lines := bridgeProcess(t, config, "", "run")
	go func() {
		for lines.Scan() {
		}
	}()
	deadline := time.Now().Add(4 * time.Minute)
	for rx.completed() < files && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	got := rx.completed()
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if got != files {
		t.Errorf("transcription.completed arrived for %d of %d recordings", got, files)
	}
	if rx.bad > 0 {
		t.Errorf("%d deliveries failed signature verification", rx.bad)
	}
	if rx.dups == 0 {
		t.Errorf("no delivery arrived twice, though the bridge was killed after one was accepted")
	}
	for key, ids := range rx.ids {
		if len(ids) != 1 {
			t.Errorf("%s arrived with %d different webhook-ids, want one", key, len(ids))
		}
	}
	order := map[string]int{"transcription.uploaded": 0, "report.completed": 1, "transcription.completed": 2}
	for job, types := range rx.byJob {
		for i := 1; i < len(types); i++ {
			if order[types[i]] < order[types[i-1]] {
				t.Errorf("job %s: events arrived as %v, out of order", job, types)
				break
			}
		}
	}
	t.Logf("%d requests to the receiver for %d recordings, %d duplicates accepted", rx.calls, files, rx.dups)
}
