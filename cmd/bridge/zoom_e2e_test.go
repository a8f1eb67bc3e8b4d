package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestZoomWebhookToTranscript: a signed recording.completed webhook reaches `bridge run`; the
// recording becomes a transcript owned by the member bound to the Zoom host
// (external:zoom:<host_id>); a forged webhook is refused; the recording of a host outside
// users is acknowledged and never uploaded; the sweep (a backfill) finds the same meeting again
// and nothing more is uploaded.
func TestZoomWebhookToTranscript(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	if _, err := c.PutIdentity(context.Background(), sandboxtest.SamID, api.Identity{Provider: "zoom", ExternalID: "zu-host-1"}); err != nil {
		t.Fatal(err)
	}
	fake := zoomtest.Start(t)
	fake.AddUser("zu-host-1", "sam.personal@elsewhere.test", "active") // not Sam's member e-mail: the identity decides
	started := time.Now().AddDate(0, 0, -10)                           // outside the regular 3-day sweep
	m4a, err := os.ReadFile("../../sandbox/testdata/media/speech.m4a")
	if err != nil {
		t.Fatal(err)
	}
	mp4, _ := os.ReadFile("../../sandbox/testdata/media/meeting.mp4")
	m := fake.AddMeeting("zu-host-1", "/Weird//uuid==", "Quarterly review", started, map[string][]byte{"M4A": m4a, "MP4": mp4})
	fake.AddUser("zu-host-2", "owner@acme.test", "active") // in the account (a member by e-mail), not in users
	foreign := fake.AddMeeting("zu-host-2", "", "Someone else's 1:1", started, map[string][]byte{"M4A": m4a})

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "zoom.secret"), []byte(zoomtest.ClientSecret), 0o600)
	os.WriteFile(filepath.Join(dir, "zoom.hook"), []byte("hook-secret"), 0o600)
	addr := freeAddr(t)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
server: {addr: %q}
sources:
  - name: zoom
    type: zoom
    account_id: %s
    client_id: %s
    client_secret_file: %q
    webhook_secret_file: %q
    api_url: %q
    oauth_url: %q
    users: [sam.personal@elsewhere.test]
    file_types: [M4A, MP4]
    schedule: "@every 1h"
    mapping: {provider: zoom, rules: [identity, email], otherwise: skip}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), addr, zoomtest.AccountID, zoomtest.ClientID,
		filepath.Join(dir, "zoom.secret"), filepath.Join(dir, "zoom.hook"), fake.URL+"/v2", fake.URL+"/oauth/token"), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, &bytes.Buffer{}, &errb) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("bridge run exited %d:\n%s", code, tail(errb.String(), 15))
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never came up:\n%s", tail(errb.String(), 15))
		}
		time.Sleep(50 * time.Millisecond)
	}

	hook := func(body []byte, secret string) int {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks/zoom/zoom", bytes.NewReader(body))
		req.Header.Set("x-zm-request-timestamp", ts)
		req.Header.Set("x-zm-signature", zoom.Sign(secret, ts, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	event := zoomtest.RecordingCompleted(m, "dl-webhook-token", time.Now())
	if code := hook(event, "not-the-secret"); code != http.StatusUnauthorized {
		t.Errorf("a forged webhook answered %d, want 401", code)
	}
	if code := hook(zoomtest.RecordingCompleted(foreign, "dl-webhook-token-2", time.Now()), "hook-secret"); code != http.StatusOK {
		t.Errorf("the webhook of a host outside users answered %d, want 200 (acknowledged, ignored)", code)
	}
	if code := hook(event, "hook-secret"); code != http.StatusOK {
		t.Fatalf("the signed webhook answered %d, want 200", code)
	}
	ext := fmt.Sprintf("zoom:%s:%s:%s", zoomtest.AccountID, m.UUID, m.File("M4A").ID)
	var it api.ListItem
	for deadline := time.Now().Add(60 * time.Second); ; {
		var ok bool
		if it, ok = completed(t, sb.URL)[ext]; ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed transcription %s:\n%s", ext, tail(errb.String(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if it.Author.ID != sandboxtest.SamID || !strings.Contains(string(it.Metadata), `"zoom_topic":"Quarterly review"`) {
		t.Errorf("transcription author %+v, metadata %s; want Sam (bound to zoom:zu-host-1) and the meeting's topic", it.Author, it.Metadata)
	}
	if n := uploads(t, sb); n != 1 {
		t.Errorf("%d uploads, want 1: the recording of a host outside users is never uploaded", n)
	}
	cancel()
	<-done
	done <- 0

	before := uploads(t, sb)
	code, out, errs := cli("sources", "backfill", "zoom", "--from", started.AddDate(0, 0, -5).Format("2006-01-02"), "--config", config)
	if code != 0 || !strings.Contains(out, "1 recording(s)") || !strings.Contains(out, ", 0 new") {
		t.Errorf("backfill = %d\n%s%s; want the meeting found again and nothing new", code, out, errs)
	}
	runOnce(t, config)
	if n := uploads(t, sb); n != before {
		t.Errorf("after the sweep found the meeting again, %d more uploads; want none", n-before)
	}
}

// TestZoomDoctorNamesSetupProblems (issue 29): bridge doctor reports each Zoom setup problem
// with its fix: after_upload without the delete scope, users Zoom does not know, a sweep_days
// beyond the six months Zoom lists (warning rows); an app that may not list recordings fails
// the source, naming the scope to add.
func TestZoomDoctorNamesSetupProblems(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("zu-host-1", "sam@acme.test", "active")
	fake.SetScopes("user:read:admin recording:read:admin")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "zoom.secret"), []byte(zoomtest.ClientSecret), 0o600)
	config := func(options string) string {
		return fmt.Sprintf(`store: {dsn: %q}
sources:
  - {name: zoom, type: zoom, account_id: %s, client_id: %s, client_secret_file: %q, api_url: %q, oauth_url: %q, %s,
     mapping: {provider: zoom, rules: [email], otherwise: key_owner}}
`, filepath.Join(dir, "bridge.db"), zoomtest.AccountID, zoomtest.ClientID, filepath.Join(dir, "zoom.secret"),
			fake.URL+"/v2", fake.URL+"/oauth/token", options)
	}
	r, _ := doctorJSON(t, dir, config("after_upload: trash, users: [sam@acme.test, nobody@acme.test], sweep_days: 200"))
	r.find(t, checkOK, "source zoom")
	var warned []string
	for _, c := range r.Items {
		if c.Check == "source zoom" && c.Status == checkWarn {
			warned = append(warned, c.Detail+" — "+c.Fix)
		}
	}
	for _, want := range [][2]string{{"recording:write:admin", "Scopes"}, {"nobody@acme.test", "correct users"}, {"sweep_days 200", "set sweep_days"}} {
		found := false
		for _, w := range warned {
			found = found || strings.Contains(w, want[0]) && strings.Contains(w, want[1])
		}
		if !found {
			t.Errorf("doctor warned %q; want a row naming %q with its fix (%q)", warned, want[0], want[1])
		}
	}

	fake.SetScopes("user:read:admin")
	r, code := doctorJSON(t, dir, config("users: all"))
	if c := r.find(t, checkFail, "source zoom"); code != 1 || !strings.Contains(c.Fix, "recording:read:admin") {
		t.Errorf("an app without recording:read:admin: exit %d, %+v; want the source failed with the scope to add", code, c)
	}
}
