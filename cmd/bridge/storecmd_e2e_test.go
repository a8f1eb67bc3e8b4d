package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/internal/pgtest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// copyReceiver is a webhook endpoint that checks every signature and records every request by
// webhook-id: whether it was accepted, and before or after the store was copied. While down it
// answers 503.
type copyReceiver struct {
	mu     sync.Mutex
	secret webhook.Secret
	down   bool
	copied bool
	// ids maps job and event type to the webhook-ids seen for them.
	ids map[string]map[string]bool
	// accepted counts acceptances per webhook-id; before holds those accepted before the copy,
	// refused those refused (503) before it, after those requested (accepted or not) after it.
	accepted               map[string]int
	before, refused, after map[string]bool
	bad                    int
}

func (rx *copyReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rx.mu.Lock()
	defer rx.mu.Unlock()
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
	id, key := r.Header.Get(webhook.HeaderID), m.Data.JobID+" "+m.Type
	if rx.ids[key] == nil {
		rx.ids[key] = map[string]bool{}
	}
	rx.ids[key][id] = true
	if rx.copied {
		rx.after[id] = true
	}
	if rx.down {
		rx.refused[id] = true
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	rx.accepted[id]++
	if !rx.copied {
		rx.before[id] = true
	}
}

// set changes the receiver's mode under its lock.
func (rx *copyReceiver) set(fn func()) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	fn()
}

// complete reports whether every event type of every job in jobs was accepted, and the
// endpoint.disabled event (of no job).
func (rx *copyReceiver) complete(jobs []bridge.Job) bool {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	keys := []string{" " + relay.EventEndpointDisabled}
	for _, j := range jobs {
		for _, typ := range []string{bridge.EventUploaded, bridge.EventReportCompleted, bridge.EventCompleted} {
			keys = append(keys, j.ID+" "+typ)
		}
	}
	for _, key := range keys {
		got := false
		for id := range rx.ids[key] {
			got = got || rx.accepted[id] > 0
		}
		if !got {
			return false
		}
	}
	return true
}

// refusedCount is how many webhook-ids were refused while the receiver was down.
func (rx *copyReceiver) refusedCount() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return len(rx.refused)
}

// copyConfig writes the bridge's configuration for store (a YAML flow mapping) and returns its
// path.
func copyConfig(t *testing.T, dir, name, store, sandboxURL, receiverURL string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	err := os.WriteFile(path, fmt.Appendf(nil, `
api: {base_url: %q, poll_interval: 1s, upload_concurrency: 2}
store: %s
relay: {lease: 2s, interval: 100ms}
sources:
  - {name: inbox, type: localdir, path: %q, stable_for: 0s, schedule: "@every 1s", author: "email:sam@acme.test", upload: {reports: [summary]}}
webhooks:
  - name: crm
    url: %q
    secret_file: %q
    events: [transcription.uploaded, report.completed, transcription.completed, endpoint.disabled]
    allow_private: true
    retry_schedule: [1s, 1s, 1s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s]
  - {name: legacy, url: "%s/legacy", secret_file: %q, events: [report.failed], allow_private: true}
`, sandboxURL, store, filepath.Join(dir, "inbox"), receiverURL, filepath.Join(dir, "crm.whsec"), receiverURL,
		filepath.Join(dir, "crm.whsec")), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runUntil runs `bridge run` (watching) with config until it has logged n lines containing
// marker and cond holds, then kills it with SIGKILL, as a crash or a pulled plug would.
func runUntil(t *testing.T, config, marker string, n int, cond func() bool) {
	t.Helper()
	cmd, lines := bridgeProcess(t, config, "", "run")
	seen := make(chan struct{})
	go func() {
		count := 0
		for lines.Scan() {
			if strings.Contains(lines.Text(), marker) {
				if count++; count == n {
					close(seen)
				}
			}
		}
	}()
	deadline := time.After(60 * time.Second)
	select {
	case <-seen:
	case <-deadline:
		t.Errorf("the bridge did not log %q %d times within a minute", marker, n)
	}
	for !cond() && !t.Failed() {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Errorf("the condition did not hold within a minute")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// TestStoreCopyContinuesOnPostgres: the bridge runs on SQLite until two recordings are done and
// delivered, two more are uploaded and being transcribed while the webhook endpoint is down (their
// deliveries pending), and a fifth is uploaded but killed before its transcription id was stored
// (left uploading); the store is copied to PostgreSQL with bridge store copy, and the bridge
// goes on there with store.driver postgres until everything is done. Each file is transcribed
// exactly once upstream, each job reaches done once, every event arrives with one webhook-id
// (retries and all), and nothing delivered before the copy is sent again.
func TestStoreCopyContinuesOnPostgres(t *testing.T) {
	t.Parallel() // child processes, mostly waiting: overlaps the other long tests
	if testing.Short() {
		t.Skip("runs the bridge as a child process")
	}
	dsn := pgtest.New(t)
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		o.TimeScale = 0.5 // 2.5 s of processing and 5 s for the report: slow enough to catch jobs in flight
		o.Seed.Workspaces[0].BalanceMinutes = 1000
	})
	secret, _ := webhook.NewSecret()
	rx := &copyReceiver{secret: secret, ids: map[string]map[string]bool{}, accepted: map[string]int{},
		before: map[string]bool{}, refused: map[string]bool{}, after: map[string]bool{}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	os.WriteFile(filepath.Join(dir, "crm.whsec"), []byte(secret.Encode()), 0o600)
	add := func(names ...string) {
		for i, name := range names {
			os.WriteFile(filepath.Join(inbox, name), wavBytes(5+i, uint32(len(name)+i)), 0o644)
		}
	}
	db := filepath.Join(dir, "bridge.db")
	onSQLite := copyConfig(t, dir, "sqlite.yaml", fmt.Sprintf("{dsn: %q}", db), sb.URL, srv.URL)
	onPostgres := copyConfig(t, dir, "postgres.yaml", fmt.Sprintf("{driver: postgres, dsn: %q}", dsn), sb.URL, srv.URL)

	// On SQLite: two recordings done and delivered; two uploaded while the endpoint is down; a
	// fifth accepted upstream, its id never stored.
	add("early-1.wav", "early-2.wav")
	cmd, lines := bridgeProcess(t, onSQLite, "")
	go func() {
		for lines.Scan() {
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bridge run --once on SQLite: %v", err)
	}
	rx.set(func() { rx.down = true })
	add("mid-1.wav", "mid-2.wav")
	runUntil(t, onSQLite, "to=queued", 2, func() bool { return rx.refusedCount() >= 2 })
	add("late.wav")
	runUntilFailpoint(t, onSQLite, "after-upload")
	// As the relay writes it on a 410, and dies before handing the event on to the endpoints.
	instance := checkBeforeCopy(t, db, func(s bridge.Store) error {
		ev := bridge.Event{Type: relay.EventEndpointDisabled, Data: json.RawMessage(`{"endpoint":"legacy","reason":"answered 410 Gone"}`)}
		return s.DisableEndpoint(context.Background(), "legacy", "answered 410 Gone", time.Now(), ev)
	})

	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"store", "copy", "--from", "sqlite:" + db, "--to", dsn}, &out, &errb); code != 0 {
		t.Fatalf("bridge store copy = %d\n%s%s", code, out.String(), errb.String())
	}
	t.Logf("bridge store copy:\n%s%s", out.String(), errb.String())
	if !strings.Contains(out.String(), "; 1 pending events published again on its bus") {
		t.Errorf("bridge store copy did not publish the one event not handed on again")
	}
	if !strings.Contains(errb.String(), "a bridge may still be running on the source") {
		t.Errorf("bridge store copy did not warn of the tracker lease the killed bridge left")
	}
	rx.set(func() { rx.copied, rx.down = true, false })

	// On PostgreSQL, until every event of every job was accepted.
	store, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cmd, lines = bridgeProcess(t, onPostgres, "", "run")
	go func() {
		for lines.Scan() {
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		jobs, err := store.Jobs(context.Background(), bridge.JobFilter{})
		// The receiver's acceptance is not the end: the bridge must also have read the answer
		// and recorded it, or a stop at that moment gives the delivery back, pending.
		if err == nil && len(jobs) == 5 && rx.complete(jobs) && allDone(jobs) && allDelivered(store) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	checkAfterCopy(t, store, instance, rx)
	checkUploadedOnce(t, sb.URL, []string{"early-1.wav", "early-2.wav", "mid-1.wav", "mid-2.wav", "late.wav"})
}

// allDelivered reports whether s records every delivery delivered.
func allDelivered(s bridge.Store) bool {
	ds, err := s.Deliveries(context.Background(), bridge.DeliveryFilter{})
	if err != nil {
		return false
	}
	for _, d := range ds {
		if d.Status != bridge.DeliveryDelivered {
			return false
		}
	}
	return true
}

// allDone reports whether every job is done.
func allDone(jobs []bridge.Job) bool {
	for _, j := range jobs {
		if j.State != bridge.StateDone {
			return false
		}
	}
	return true
}
