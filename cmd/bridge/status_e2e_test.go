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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// statusReceiver is a webhook endpoint that answers 500 to everything until accept is set, then
// takes every delivery, keeping its webhook-id and event type.
type statusReceiver struct {
	mu     sync.Mutex
	accept bool
	got    map[string]string
}

func (rx *statusReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct{ Type string }
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &m)
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if !rx.accept {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
		return
	}
	rx.got[r.Header.Get(webhook.HeaderID)] = m.Type
}

func (rx *statusReceiver) set(accept bool) { rx.mu.Lock(); rx.accept = accept; rx.mu.Unlock() }
func (rx *statusReceiver) typeOf(id string) string {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.got[id]
}

// statusRig is bridge run (in-process) with its status page, on a sandbox, a receiver and a
// folder of three recordings: two owned by a member (mapped by e-mail), one by a stranger
// (held as unmapped).
type statusRig struct {
	base, token, config string
	rx                  *statusReceiver
	store               database
}

func startStatusRig(t *testing.T) *statusRig {
	t.Helper()
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	rig := &statusRig{rx: &statusReceiver{got: map[string]string{}}, token: "admin-token-of-the-browser-test"}
	recv := httptest.NewServer(rig.rx)
	t.Cleanup(recv.Close)
	dir := t.TempDir()
	for i, folder := range []string{"owner@acme.test", "owner@acme.test", "u-stranger"} {
		os.MkdirAll(filepath.Join(dir, "inbox", folder), 0o755)
		os.WriteFile(filepath.Join(dir, "inbox", folder, fmt.Sprintf("call-%d.wav", i+1)), wavBytes(4, uint32(i+1)), 0o644)
	}
	secret, _ := webhook.NewSecret()
	os.WriteFile(filepath.Join(dir, "crm.whsec"), []byte(secret.Encode()), 0o600)
	os.WriteFile(filepath.Join(dir, "admin.token"), []byte(rig.token+"\n"), 0o600)
	addr := freeAddr(t)
	rig.base = "http://" + addr
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
server: {addr: %q, admin_token_file: %q}
relay: {lease: 2s, interval: 100ms}
sources:
  - name: inbox
    type: localdir
    path: %q
    stable_for: 0s
    schedule: "@every 1s"
    owner_from: folder
    mapping: {provider: sso, rules: [identity, email], otherwise: hold}
webhooks:
  - {name: crm, url: %q, secret_file: %q, allow_private: true, retry_schedule: [100ms]}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), addr, filepath.Join(dir, "admin.token"), filepath.Join(dir, "inbox"),
		recv.URL, filepath.Join(dir, "crm.whsec")), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	var errb statusLog
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, io.Discard, &errb) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("bridge run exited %d:\n%s", code, tail(errb.String(), 20))
		}
	})
	awaitValue(t, 30*time.Second, "GET /healthz", func() string {
		res, err := http.Get(rig.base + "/healthz")
		if err != nil {
			return err.Error()
		}
		res.Body.Close()
		return res.Status
	}, func(s string) bool { return strings.HasPrefix(s, "200") })
	if !strings.Contains(errb.String(), "status page at /") {
		t.Fatalf("the log does not say the status page is served:\n%s", tail(errb.String(), 20))
	}
	rig.config = config
	cfg, err := loadConfig(config, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rig.store, err = openStoreAt(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rig.store.Close() })
	return rig
}

// statusLog is a bytes.Buffer safe for the bridge's log and the test to share.
type statusLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *statusLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *statusLog) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// heldAndDead waits for the stranger's job to be held and its recording.held event to be a
// dead letter, and returns both ids.
func (rig *statusRig) heldAndDead(t *testing.T) (jobID, deliveryID string) {
	t.Helper()
	ctx := context.Background()
	jobID = awaitValue(t, 30*time.Second, "a held job", func() string {
		held, _ := rig.store.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateHeld}})
		if len(held) == 1 {
			return held[0].ID
		}
		return ""
	}, func(s string) bool { return s != "" })
	deliveryID = awaitValue(t, 30*time.Second, "its dead letter", func() string {
		dead, _ := rig.store.Deliveries(ctx, bridge.DeliveryFilter{Status: bridge.DeliveryDead})
		for _, d := range dead {
			if d.JobID == jobID && d.Type == bridge.EventHeld {
				return d.ID
			}
		}
		return ""
	}, func(s string) bool { return s != "" })
	return jobID, deliveryID
}

// TestStatusPageInBrowser: in headless Chromium, an admin refused with a wrong token signs in,
// sees the held job on the overview, reassigns it to a member picked from the workspace's
// members and watches it upload to done on its timeline; then replays its dead-lettered
// webhook, which the receiver gets with the same webhook-id. Both actions are in the audit log.
// Screenshots of the overview and the timeline are kept as the test's artefacts.
func TestStatusPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bridge and a browser")
	}
	bctx := newBrowser(t)
	rig := startStatusRig(t)
	jobID, deadID := rig.heldAndDead(t)
	rig.rx.set(true) // the receiver is back: what comes next is delivered

	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	browse(t, bctx, 30*time.Second, "a wrong token", chromedp.Navigate(rig.base+"/"), chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), "not-the-admin-token"), chromedp.Submit(css(`#token`)), chromedp.WaitVisible(css(`p.error`)))
	if msg := textOf(t, bctx, `p.error`); !strings.Contains(msg, "Wrong token") {
		t.Errorf("a wrong token says %q, want Wrong token", msg)
	}
	browse(t, bctx, 30*time.Second, "sign in", chromedp.SendKeys(css(`#token`), rig.token), chromedp.Submit(css(`#token`)),
		chromedp.WaitVisible(css(`#h-jobs`)))
	if title, overview := textOf(t, bctx, `h1`), textOf(t, bctx, `main`); title != "Overview" || !strings.Contains(overview, "1 held") ||
		!strings.Contains(overview, "crm") {
		t.Errorf("overview %q shows:\n%s\nwant 1 held and endpoint crm failing", title, overview)
	}
	shot := screenshot(t, bctx, "status-overview.png")
	if *updateScreenshot {
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "status-overview.png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	held := `#held-` + jobID
	browse(t, bctx, 30*time.Second, "the held queue", chromedp.Navigate(rig.base+"/held"), chromedp.WaitVisible(css(held)))
	screenshot(t, bctx, "status-held.png")
	browse(t, bctx, 30*time.Second, "reassign to Sam", chromedp.SetValue(css(held+` select[name=member]`), sandboxtest.SamID), chromedp.Click(css(held+` form.reassign button`)),
		chromedp.WaitVisible(css(`p.flash`)))
	if msg := textOf(t, bctx, `p.flash`); !strings.Contains(msg, "released with author email:sam@acme.test") {
		t.Fatalf("after reassign the page says %q", msg)
	}
	var seen []string
	awaitValue(t, 60*time.Second, "the job's state on its page", func() string {
		browse(t, bctx, 20*time.Second, "the job's page", chromedp.Navigate(rig.base+"/jobs/"+jobID))
		state := textOf(t, bctx, `#job-state`)
		if !slices.Contains(seen, state) {
			seen = append(seen, state)
		}
		return state
	}, func(s string) bool { return s == "done" })
	timeline := textOf(t, bctx, `ol.timeline`)
	for _, want := range []string{"held → discovered", "released by hand: author email:sam@acme.test", "ready → uploading", "uploading → queued",
		"→ done", "recording.held to crm"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, timeline)
		}
	}
	t.Logf("states seen on the job's page: %v", seen)
	screenshot(t, bctx, "status-job-timeline.png")

	dead := `#delivery-` + deadID
	browse(t, bctx, 30*time.Second, "the dead letters", chromedp.Navigate(rig.base+"/deliveries?status=dead"), chromedp.WaitVisible(css(dead)))
	screenshot(t, bctx, "status-dead-letters.png")
	browse(t, bctx, 30*time.Second, "replay the dead letter", chromedp.Click(css(dead+` form.replay button`)), chromedp.WaitVisible(css(`p.flash`)))
	if msg := textOf(t, bctx, `p.flash`); !strings.Contains(msg, "will be sent again") {
		t.Fatalf("after replay the page says %q", msg)
	}
	d, _, err := rig.store.Delivery(context.Background(), deadID)
	if err != nil {
		t.Fatal(err)
	}
	awaitValue(t, 30*time.Second, "the replayed delivery at the receiver", func() string { return rig.rx.typeOf(d.WebhookID) },
		func(s string) bool { return s == bridge.EventHeld })
	awaitValue(t, 30*time.Second, "the delivery's status on its page", func() string {
		browse(t, bctx, 20*time.Second, "the delivery's page", chromedp.Navigate(rig.base+"/deliveries/"+deadID))
		return textOf(t, bctx, `#delivery-status`)
	}, func(s string) bool { return s == "delivered" })

	log, err := rig.store.AuditLog(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range slices.Backward(log) {
		got = append(got, e.Action+" "+strings.Join(e.Targets, ","))
		if e.Action == "login refused" {
			if e.Who != "sign-in from 127.0.0.1" || e.Error != "wrong token" {
				t.Errorf("audit entry %+v: want the refused sign-in from 127.0.0.1, wrong token", e)
			}
			continue
		}
		if !strings.HasPrefix(e.Who, "admin session ") || e.Error != "" {
			t.Errorf("audit entry %+v: want by an admin session, without an error", e)
		}
	}
	if want := []string{"login refused ", "login ", "reassign " + jobID, "replay " + deadID}; !slices.Equal(got, want) {
		t.Errorf("audit log = %q, want %q", got, want)
	}
	code, out, errs := cli("audit", "list", "--config", rig.config)
	if code != 0 || !regexpMatch(`admin session [0-9a-f]{8} from 127\.0\.0\.1 +reassign +`+jobID, out) || !strings.Contains(out, "replay") {
		t.Errorf("bridge audit list = %d\n%s%s", code, out, errs)
	}
}
