package status

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true, "127.0.0.2:1": true, "LOCALHOST:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.5:8080": false, "bridge.example:8080": false, "": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestNoTokenOffLoopbackIsRefused: a page without a token may only run on loopback.
func TestNoTokenOffLoopbackIsRefused(t *testing.T) {
	if _, err := New(Options{Loopback: false}); !errors.Is(err, ErrNoToken) {
		t.Errorf("New(no token, not loopback) = %v, want ErrNoToken", err)
	}
}

// TestSignIn: the pages send a browser without a session to the sign-in form; a wrong token is
// refused with nothing set; the right one sets an HttpOnly, SameSite=Strict cookie (not Secure
// over plain HTTP) and records the sign-in; signing out ends the session.
func TestSignIn(t *testing.T) {
	rg := newRig(t, nil)
	c := rg.client
	for _, path := range []string{"/", "/jobs", "/held", "/deliveries", "/endpoints", "/exports", "/audit"} {
		res, err := c.Get(rg.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
			t.Errorf("GET %s without a session = %d → %q, want 303 → /login", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res, body := rg.post(t, c, "/login", url.Values{"token": {"wrong"}})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong token") || len(res.Cookies()) != 0 {
		t.Errorf("POST /login with a wrong token = %d, cookies %v\n%s", res.StatusCode, res.Cookies(), body)
	}
	res, _ = rg.post(t, c, "/login", url.Values{"token": {testToken}})
	var cookie *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == cookieName {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure || len(cookie.Value) < 40 {
		t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Strict, not Secure over HTTP, a long random id", cookie)
	}
	code, page := rg.get(t, c, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / signed in = %d\n%s", code, page)
	}
	contains(t, "the overview", page, "Overview", "Sign out")
	if strings.Contains(page, "No admin token") {
		t.Error("the overview shows the no-token banner although a token is set")
	}
	log, _ := rg.store.AuditLog(context.Background(), 0)
	if len(log) != 1 || log[0].Action != "login" || !strings.HasPrefix(log[0].Who, "admin session ") || strings.Contains(log[0].Who, cookie.Value[:8]) {
		t.Errorf("audit log after sign-in = %+v, want one login by the session's tag (never its id)", log)
	}
	res, _ = rg.post(t, c, "/logout", url.Values{"csrf": {csrfOf(t, page)}})
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("POST /logout = %d", res.StatusCode)
	}
	if code, _ := rg.get(t, c, "/"); code != http.StatusSeeOther {
		t.Errorf("GET / after signing out = %d, want 303 to the sign-in form", code)
	}
	// A stolen cookie of an ended session is worth nothing either.
	thief := newClient(t)
	thief.Jar.SetCookies(mustURL(t, rg.srv.URL), []*http.Cookie{{Name: cookieName, Value: cookie.Value}})
	if code, _ := rg.get(t, thief, "/"); code != http.StatusSeeOther {
		t.Errorf("GET / with an ended session's cookie = %d, want 303", code)
	}
}

// TestSecureCookieOverTLS: over TLS the session cookie is Secure.
func TestSecureCookieOverTLS(t *testing.T) {
	rg := newRig(t, nil)
	mux := http.NewServeMux()
	rg.page.Mount(mux)
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.PostForm(srv.URL+"/login", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cs := res.Cookies(); len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookies over TLS = %+v, want one Secure, HttpOnly, SameSite=Strict", cs)
	}
}

// TestRefusedSignInsAreLimited: past 10 refused sign-ins in a row, even the right token waits.
func TestRefusedSignInsAreLimited(t *testing.T) {
	rg := newRig(t, nil)
	for range 10 {
		rg.post(t, rg.client, "/login", url.Values{"token": {"guess"}})
	}
	if res, _ := rg.post(t, rg.client, "/login", url.Values{"token": {testToken}}); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("POST /login after 10 refused = %d, want 429", res.StatusCode)
	}
}

// TestPostWithoutCSRFIsRefused: a state-changing POST without the session's CSRF token (or with
// another one, or cross-site) is refused, does nothing and writes nothing to the audit log.
func TestPostWithoutCSRFIsRefused(t *testing.T) {
	rg := newRig(t, nil)
	j := rg.heldJob(t, "call.wav")
	csrf := rg.login(t, rg.client)
	ctx := context.Background()
	before, _ := rg.store.AuditLog(ctx, 0)
	for name, form := range map[string]url.Values{
		"no token":    {"author": {"email:sam@acme.test"}},
		"wrong token": {"author": {"email:sam@acme.test"}, "csrf": {csrf + "x"}},
		"empty token": {"author": {"email:sam@acme.test"}, "csrf": {""}},
	} {
		res, body := rg.post(t, rg.client, "/held/"+j.ID+"/release", form)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("release with %s = %d\n%s", name, res.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("POST", rg.srv.URL+"/endpoints/crm/pause", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := rg.client.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site POST = %v, %v; want 403", res, err)
	}
	// Signed out, nothing is taken either.
	if res, _ := rg.post(t, newClient(t), "/held/"+j.ID+"/release", url.Values{"author": {"email:sam@acme.test"}, "csrf": {csrf}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("release without a session = %d, want 403", res.StatusCode)
	}
	if got, _ := rg.store.Job(ctx, j.ID); got.State != bridge.StateHeld {
		t.Errorf("job after refused POSTs is %s, want held", got.State)
	}
	if d, _ := rg.store.DisabledEndpoints(ctx); len(d) != 0 {
		t.Errorf("endpoints disabled by refused POSTs: %v", d)
	}
	if after, _ := rg.store.AuditLog(ctx, 0); len(after) != len(before) {
		t.Errorf("audit log grew from %d to %d entries on refused POSTs", len(before), len(after))
	}
}

// TestNoTokenOnLoopback: without a token every visitor on loopback is the admin, the banner
// says so, a request naming another host is refused (DNS rebinding), and the audit log names
// the remote address.
func TestNoTokenOnLoopback(t *testing.T) {
	rg := newRig(t, func(o *Options) { o.Token = "" })
	code, page := rg.get(t, rg.client, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	contains(t, "the overview without a token", page, "No admin token is configured", "loopback")
	if strings.Contains(page, "Sign out") {
		t.Error("a page without a token offers to sign out")
	}
	if code, _ := rg.get(t, rg.client, "/login"); code != http.StatusSeeOther {
		t.Errorf("GET /login without a token = %d, want 303 to /", code)
	}
	req, _ := http.NewRequest("GET", rg.srv.URL+"/", nil)
	req.Host = "rebound.example:80"
	if res, err := rg.client.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("GET / naming host rebound.example = %v, %v; want 403", res, err)
	}
	_, page = rg.get(t, rg.client, "/endpoints")
	res, _ := rg.post(t, rg.client, "/endpoints/crm/pause", url.Values{"csrf": {csrfOf(t, page)}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pause = %d", res.StatusCode)
	}
	log, _ := rg.store.AuditLog(context.Background(), 1)
	if len(log) != 1 || log[0].Who != "admin from 127.0.0.1" || log[0].Action != "pause" {
		t.Errorf("audit log = %+v, want a pause by admin from 127.0.0.1", log)
	}
}

// TestSessionsExpire: a session ends SessionTTL after sign-in.
func TestSessionsExpire(t *testing.T) {
	rg := newRig(t, func(o *Options) { o.SessionTTL = time.Hour })
	rg.login(t, rg.client)
	rg.clock.add(time.Hour + time.Second)
	if code, _ := rg.get(t, rg.client, "/"); code != http.StatusSeeOther {
		t.Errorf("GET / past the session's expiry = %d, want 303 to sign in", code)
	}
}

func TestBackToStaysOnSite(t *testing.T) {
	for in, want := range map[string]string{"/held?x=1": "/held?x=1", "//evil.example": "/f", `/\evil`: "/f",
		"https://evil.example/": "/f", "": "/f", "held": "/f", "/a\r\nSet-Cookie: x": "/f"} {
		if got := backTo(in, "/f"); got != want {
			t.Errorf("backTo(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got, err := ReadToken(write("good", "  "+testToken+"\n")); err != nil || got != testToken {
		t.Errorf("ReadToken(good) = %q, %v; want the token trimmed", got, err)
	}
	for name, content := range map[string]string{"empty": "\n", "short": "abc123"} {
		p := write(name, content)
		if _, err := ReadToken(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("ReadToken(%s) = %v, want an error naming the file and the minimum", name, err)
		}
	}
	if _, err := ReadToken(dir + "/missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadToken(missing) = %v, want ErrNotExist", err)
	}
}
