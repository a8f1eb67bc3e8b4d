// Package proxytest serves a forward HTTP proxy on loopback for tests: a plain HTTP request in
// absolute form (http://host/path) is forwarded, a CONNECT opens a tunnel (for https), and
// every request or tunnel is counted by its target host. Route decides which address a target
// reaches, so tests can name hosts that exist nowhere but behind the proxy.
package proxytest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a running forward proxy.
type Proxy struct {
	// URL is the proxy's address, http://127.0.0.1:port, for HTTP_PROXY and HTTPS_PROXY.
	URL string

	route     func(hostport string) string
	transport *http.Transport
	mu        sync.Mutex
	hits      map[string]int
}

// Start serves a proxy until the test ends. route maps a target host:port to the address the
// proxy connects to; nil connects to the target itself.
func Start(t testing.TB, route func(hostport string) string) *Proxy {
	if route == nil {
		route = func(hostport string) string { return hostport }
	}
	p := &Proxy{route: route, hits: map[string]int{}}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	p.transport = &http.Transport{ // never itself proxied
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, p.route(addr))
		},
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		p.transport.CloseIdleConnections()
	})
	p.URL = srv.URL
	return p
}

// Hits returns how many requests and tunnels the proxy served for host (a name or address,
// without the port).
func (p *Proxy) Hits(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[host]
}

// Total returns how many requests and tunnels the proxy served.
func (p *Proxy) Total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, h := range p.hits {
		n += h
	}
	return n
}

func (p *Proxy) count(hostport string) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	p.mu.Lock()
	p.hits[host]++
	p.mu.Unlock()
}

// ServeHTTP forwards one request or opens one tunnel.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.count(r.Host)
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "proxytest: not a proxy request (want an absolute URL)", http.StatusBadRequest)
		return
	}
	p.count(r.URL.Host)
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		out.Header.Del(h)
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, "proxytest: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// tunnel answers CONNECT host:port and copies bytes both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	upstream, err := net.DialTimeout("tcp", p.route(r.Host), 5*time.Second)
	if err != nil {
		http.Error(w, "proxytest: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "proxytest: cannot hijack", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	done := make(chan struct{}, 2)
	go func() { io.Copy(upstream, buf); done <- struct{}{} }()
	go func() { io.Copy(conn, upstream); done <- struct{}{} }()
	<-done
	conn.Close()
	upstream.Close()
	<-done
}

// Use points HTTP_PROXY and HTTPS_PROXY at the proxy for the rest of the test (and clears
// NO_PROXY and the lower-case forms), for code that reads the proxy environment.
func (p *Proxy) Use(t *testing.T) {
	for _, v := range []string{"http_proxy", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(v, "")
	}
	t.Setenv("HTTP_PROXY", p.URL)
	t.Setenv("HTTPS_PROXY", p.URL)
}

// To returns a route that sends every target to addr (host:port, or a URL whose host is
// taken), for names that exist only behind the proxy.
func To(addr string) func(string) string {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	return func(string) string { return addr }
}
