package status

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
	if len(log) != 2 || log[0].Action != "login" || !strings.HasPrefix(log[0].Who, "admin session ") || strings.Contains(log[0].Who, cookie.Value[:8]) ||
		log[1].Action != "login refused" || log[1].Who != "sign-in from 127.0.0.1" {
		t.Errorf("audit log after a refused sign-in and a sign-in = %+v, want the login by the session's tag (never its id) after the refusal from 127.0.0.1", log)
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

// TestRefusedSignInsAreLimited (issue 30, point 5): refused sign-ins are limited per client
// address, with a wait that doubles; an address that keeps guessing waits (even with the right
// token), while the admin at another address still signs in; every refusal is in the audit
// log with the address, and the first refused try of a wait too.
func TestRefusedSignInsAreLimited(t *testing.T) {
	rg := newRig(t, func(o *Options) { o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	from := func(addr, token string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, rg.srv.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", addr)
		res, err := newClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	const attacker, admin = "203.0.113.66", "198.51.100.7"
	for i := range signinFree + 1 {
		if res := from(attacker, "guess"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("refused sign-in %d from %s = %d, want 401", i+1, attacker, res.StatusCode)
		}
	}
	res := from(attacker, testToken)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("sign-in from %s after %d refused = %d (Retry-After %q), want 429 with Retry-After", attacker, signinFree+1, res.StatusCode, res.Header.Get("Retry-After"))
	}
	if res := from(admin, testToken); res.StatusCode != http.StatusSeeOther {
		t.Errorf("sign-in with the right token from %s while %s is limited = %d, want 303", admin, attacker, res.StatusCode)
	}
	// The wait doubles with each refusal past the free ones.
	rg.clock.add(signinWaitMin + time.Millisecond)
	from(attacker, "guess")
	rg.clock.add(signinWaitMin + time.Millisecond)
	if res := from(attacker, testToken); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("sign-in from %s one wait after another refusal = %d, want 429 (the wait doubled)", attacker, res.StatusCode)
	}
	log, _ := rg.store.AuditLog(context.Background(), 0)
	refused, limited := 0, 0
	for _, e := range log {
		if e.Action == "login refused" && e.Who == "sign-in from "+attacker {
			refused++
			if strings.Contains(e.Error, "too many") {
				limited++
			}
		}
	}
	if refused != signinFree+2+2 || limited != 2 {
		t.Errorf("audit log has %d refused sign-ins from %s (%d of them limited), want %d (2 limited):\n%+v", refused, attacker, limited, signinFree+4, log)
	}
}

// TestClientAddr: X-Forwarded-For names the client only when the connection comes from a
// trusted proxy, and only its hops appended by trusted proxies count.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		remote, xff, want string
	}{
		{"192.0.2.1:1234", "", "192.0.2.1"},
		{"192.0.2.1:1234", "198.51.100.7", "192.0.2.1"},             // not a trusted proxy: its header is ignored
		{"10.0.0.2:1234", "198.51.100.7", "198.51.100.7"},           // the proxy's client
		{"10.0.0.2:1234", "6.6.6.6, 198.51.100.7", "198.51.100.7"},  // a forged first hop is ignored
		{"10.0.0.2:1234", "198.51.100.7, 10.0.0.9", "198.51.100.7"}, // two trusted proxies
		{"10.0.0.2:1234", "", "10.0.0.2"},
		{"10.0.0.2:1234", "junk", "10.0.0.2"},
		{"10.0.0.2:1234", "198.51.100.7:4711", "198.51.100.7"}, // a hop with its port
		{"10.0.0.2:1234", "[2001:db8::7]:4711", "2001:db8::7"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := clientAddr(r, trusted); got != tc.want {
			t.Errorf("clientAddr(from %s, X-Forwarded-For %q) = %q, want %q", tc.remote, tc.xff, got, tc.want)
		}
	}
}

// TestLimitKey: an IPv6 client is limited by its /64, which one host holds whole.
func TestLimitKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7": "192.0.2.7", "2001:db8:1:2:aaaa::1": "2001:db8:1:2::/64", "2001:db8:1:2:bbbb::9": "2001:db8:1:2::/64",
		"::ffff:192.0.2.7": "::ffff:192.0.2.7", "not an address": "not an address",
	} {
		if got := limitKey(in); got != want {
			t.Errorf("limitKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSecureCookieBehindATLSProxy (issue 30, point 6): behind a trusted proxy that says the
// browser came over https, or with SecureCookies, the session cookie is Secure; the same header
// from anyone else changes nothing.
func TestSecureCookieBehindATLSProxy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*Options)
		proto  string
		secure bool
	}{
		{"trusted proxy, https", func(o *Options) { o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} }, "https", true},
		{"untrusted, https", nil, "https", false},
		{"secure_cookies", func(o *Options) { o.SecureCookies = true }, "", true},
	} {
		rg := newRig(t, tc.edit)
		req, _ := http.NewRequest(http.MethodPost, rg.srv.URL+"/login", strings.NewReader(url.Values{"token": {testToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		res, err := newClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if cs := res.Cookies(); len(cs) != 1 || cs[0].Secure != tc.secure {
			t.Errorf("%s: cookies = %+v, want one with Secure %v", tc.name, cs, tc.secure)
		}
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
		"https://evil.example/": "/f", "": "/f", "held": "/f", "/a\r\nSet-Cookie: x": "/f",
		"/\t/evil.test": "/f", "/\n/evil.test": "/f", "/x\x00": "/f", "/a\\b": "/f", "/jobs?q=a b": "/jobs?q=a b"} {
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
