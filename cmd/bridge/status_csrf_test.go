package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/server"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestMountStatus: without a token the page is not mounted on an address that is not loopback,
// and the log says why; a token file too short refuses to start, naming the key.
func TestMountStatus(t *testing.T) {
	var logb bytes.Buffer
	d := &serveDeps{cfg: &Config{}, log: newLogger(&logb)}
	if err := mountStatus(server.New("0.0.0.0:8080", d.log), d); err != nil {
		t.Fatalf("mountStatus on 0.0.0.0 without a token = %v, want nil (not mounted)", err)
	}
	if !strings.Contains(logb.String(), "status page not served") || !strings.Contains(logb.String(), "admin_token_file is not set") {
		t.Errorf("the log does not say why the page is not served:\n%s", logb.String())
	}
	short := filepath.Join(t.TempDir(), "admin.token")
	os.WriteFile(short, []byte("short\n"), 0o600)
	d.cfg.Server.AdminTokenFile = short
	err := mountStatus(server.New("0.0.0.0:8080", d.log), d)
	if err == nil || !strings.Contains(err.Error(), "server.admin_token_file") || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("mountStatus with a short token = %v, want an error naming server.admin_token_file", err)
	}
}

// TestStatusPageRefusesPostsWithoutCSRF: against the running bridge, a signed-in client's POSTs
// without the form's CSRF token are refused (403) and change nothing.
func TestStatusPageRefusesPostsWithoutCSRF(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bridge")
	}
	rig := startStatusRig(t)
	jobID, deadID := rig.heldAndDead(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values) int {
		res, err := c.PostForm(rig.base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("/login", url.Values{"token": {"wrong-token-wrong-token"}}); code != http.StatusUnauthorized {
		t.Errorf("sign-in with a wrong token = %d, want 401", code)
	}
	if code := post("/login", url.Values{"token": {rig.token}}); code != http.StatusSeeOther {
		t.Fatalf("sign-in = %d, want 303", code)
	}
	for path, form := range map[string]url.Values{
		"/held/" + jobID + "/release":       {"author": {"email:sam@acme.test"}},
		"/held/" + jobID + "/reassign":      {"member": {sandboxtest.SamID}, "csrf": {"forged"}},
		"/deliveries/" + deadID + "/replay": {},
		"/endpoints/crm/pause":              {},
	} {
		if code := post(path, form); code != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF token = %d, want 403", path, code)
		}
	}
	ctx := context.Background()
	if j, _ := rig.store.Job(ctx, jobID); j.State != bridge.StateHeld {
		t.Errorf("job is %s after refused POSTs, want held", j.State)
	}
	if d, _, _ := rig.store.Delivery(ctx, deadID); d.Status != bridge.DeliveryDead {
		t.Errorf("delivery is %s after a refused replay, want dead", d.Status)
	}
	if off, _ := rig.store.DisabledEndpoints(ctx); len(off) != 0 {
		t.Errorf("endpoints disabled by a refused pause: %v", off)
	}
}

// TestMountStatusRefusesWhenExposed (issue 30, point 1): on loopback without a token, a source
// that receives webhooks from outside (a Zoom webhook secret, a Teams public_url) means a proxy
// or tunnel forwards to this server: the page is not served, every path of it answers 403
// saying why and what to set, and the log says so.
func TestMountStatusRefusesWhenExposed(t *testing.T) {
	for _, src := range []SourceConfig{
		{Name: "zoom", Type: "zoom", Options: map[string]any{"webhook_secret_file": "/run/secrets/zoom"}},
		{Name: "teams", Type: "teams", Options: map[string]any{"notifications": map[string]any{"public_url": "https://bridge.example.com", "client_state_file": "/run/x"}}},
	} {
		var logb bytes.Buffer
		d := &serveDeps{cfg: &Config{Sources: []SourceConfig{src}}, log: newLogger(&logb)}
		srv := server.New("127.0.0.1:0", d.log)
		if err := mountStatus(srv, d); err != nil {
			t.Fatalf("mountStatus(%s) = %v", src.Name, err)
		}
		at, err := srv.Listen()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go srv.Serve(ctx)
		for _, path := range []string{"/", "/held", "/endpoints"} {
			res, err := http.Get("http://" + at + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("with source %s, GET %s without a token = %d, want 403", src.Name, path, res.StatusCode)
			}
		}
		cancel()
		if !strings.Contains(logb.String(), "status page not served") || !strings.Contains(logb.String(), src.Name) {
			t.Errorf("with source %s the log does not say why the page is not served:\n%s", src.Name, logb.String())
		}
	}
}
