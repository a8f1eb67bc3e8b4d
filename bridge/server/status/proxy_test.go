package status

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// TestNoTokenBehindAProxyIsRefused (issue 30, point 1): a page without a token answers only
// local requests. A reverse proxy on the same machine (as nginx's proxy_pass
// http://127.0.0.1:8080 does) connects from loopback and sends a loopback Host, for anyone on
// the internet: the headers it adds give it away, and the page refuses every request with
// any of them, reads and actions alike.
func TestNoTokenBehindAProxyIsRefused(t *testing.T) {
	rg := newRig(t, func(o *Options) { o.Token = "" })
	if code, _ := rg.get(t, rg.client, "/held"); code != http.StatusOK {
		t.Fatalf("GET /held from loopback without a proxy = %d, want 200", code)
	}
	// A real reverse proxy in front, keeping the loopback Host as nginx's proxy_pass does.
	target, _ := url.Parse(rg.srv.URL)
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = target.Host
		pr.SetXForwarded()
	}}
	front := httptest.NewServer(proxy)
	defer front.Close()
	for _, path := range []string{"/", "/held", "/endpoints", "/deliveries"} {
		res, err := http.Get(front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s through a reverse proxy without a token = %d, want 403", path, res.StatusCode)
		}
	}
	res, err := http.PostForm(front.URL+"/endpoints/crm/pause", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("POST /endpoints/crm/pause through a reverse proxy = %d, want 403", res.StatusCode)
	}
	// Each header a proxy may add, alone.
	for _, h := range []struct{ name, value string }{
		{"Forwarded", "for=203.0.113.7;proto=https"},
		{"X-Forwarded-For", "203.0.113.7"},
		{"X-Forwarded-Host", "bridge.example.com"},
		{"X-Real-IP", "203.0.113.7"},
	} {
		req, _ := http.NewRequest(http.MethodGet, rg.srv.URL+"/", nil)
		req.Header.Set(h.name, h.value)
		res, err := rg.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("GET / with %s: %s and no token = %d, want 403", h.name, h.value, res.StatusCode)
		}
	}
}

// TestNotLocal: the connection's own address counts, not only the Host it names.
func TestNotLocal(t *testing.T) {
	for _, tc := range []struct {
		remote, host string
		local        bool
	}{
		{"127.0.0.1:5000", "127.0.0.1:8080", true},
		{"[::1]:5000", "localhost:8080", true},
		{"192.0.2.10:5000", "127.0.0.1:8080", false}, // Host forged by a client on the network
		{"127.0.0.1:5000", "bridge.example.com", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr, r.Host = tc.remote, tc.host
		if got := notLocal(r); (got == "") != tc.local {
			t.Errorf("notLocal(from %s, Host %s) = %q, want local %v", tc.remote, tc.host, got, tc.local)
		}
	}
}
