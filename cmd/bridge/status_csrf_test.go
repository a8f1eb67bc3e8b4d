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

// TestMountStatus: without server.admin_token_file the bridge makes an admin token next to its
// store (0600) and the page asks for it, on any address; the log names the file, never the
// token; the next start keeps it. server.admin_without_token is refused off loopback. A token
// file too short refuses to start, naming the key.
func TestMountStatus(t *testing.T) {
	var logb bytes.Buffer
	dir := t.TempDir()
	d := &serveDeps{cfg: &Config{}, log: newLogger(&logb)}
	d.cfg.Store.Driver, d.cfg.Store.DSN = "sqlite", filepath.Join(dir, "data", "bridge.db")
	srv := server.New("0.0.0.0:0", d.log)
	if err := mountStatus(srv, d); err != nil {
		t.Fatalf("mountStatus without a token = %v", err)
	}
	path := filepath.Join(dir, "data", "admin.token")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file %s: %v, mode %v; want one made, 0600", path, err, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(b))
	if len(token) < 32 || !strings.Contains(logb.String(), path) || strings.Contains(logb.String(), token) {
		t.Errorf("token %d characters; log:\n%s\nwant a long token, its file named, the token itself never logged", len(token), logb.String())
	}
	at, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// nginx's default proxy_pass: from loopback, a loopback Host, no forwarding header.
	req, _ := http.NewRequest(http.MethodGet, "http://"+at+"/held", nil)
	req.Host = "127.0.0.1:8080"
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Errorf("GET /held as a plain proxy sends it = %d → %q, want 303 → /login", res.StatusCode, res.Header.Get("Location"))
	}
	// The next start keeps the token.
	if err := mountStatus(server.New("127.0.0.1:0", d.log), d); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("the admin token changed at the next start")
	}

	logb.Reset()
	d.cfg.Server.AdminWithoutToken = true
	if err := mountStatus(server.New("0.0.0.0:8080", d.log), d); err != nil {
		t.Fatalf("mountStatus on 0.0.0.0 with admin_without_token = %v, want nil (not mounted)", err)
	}
	if !strings.Contains(logb.String(), "status page not served") || !strings.Contains(logb.String(), "loopback") {
		t.Errorf("the log does not say why the page is not served:\n%s", logb.String())
	}
	short := filepath.Join(t.TempDir(), "admin.token")
	os.WriteFile(short, []byte("short\n"), 0o600)
	d.cfg.Server.AdminTokenFile = short
	err = mountStatus(server.New("0.0.0.0:8080", d.log), d)
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
		"/jobs/" + jobID + "/forget":        {"confirm": {"forget"}},
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

// TestMountStatusRefusesWhenExposed (issue 30, point 1): with admin_without_token on loopback, a
// source that receives webhooks from outside (a Zoom webhook secret, a Teams public_url) means a
// proxy or tunnel forwards to this server: the page is not served, every path of it answers 403
// saying why and what to change, and the log says so.
func TestMountStatusRefusesWhenExposed(t *testing.T) {
	for _, src := range []SourceConfig{
		{Name: "zoom", Type: "zoom", Options: map[string]any{"webhook_secret_file": "/run/secrets/zoom"}},
		{Name: "teams", Type: "teams", Options: map[string]any{"notifications": map[string]any{"public_url": "https://bridge.example.com", "client_state_file": "/run/x"}}},
	} {
		var logb bytes.Buffer
		d := &serveDeps{cfg: &Config{Sources: []SourceConfig{src}}, log: newLogger(&logb)}
		d.cfg.Server.AdminWithoutToken = true
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
