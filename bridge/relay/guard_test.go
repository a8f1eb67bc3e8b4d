package relay

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/internal/httpenv"
	"github.com/transcript-bridge/bridge/internal/proxytest"
)

// fakeResolver answers from a table; a name not in it does not exist.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var names = fakeResolver{
	"hooks.example.test":    {netip.MustParseAddr("203.0.113.7")},
	"example.com":           {netip.MustParseAddr("203.0.113.8")},
	"internal.example.test": {netip.MustParseAddr("10.0.0.8")},
	"mixed.example.test":    {netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("fd00::1")},
	"metadata.example.test": {netip.MustParseAddr("169.254.169.254")},
	"empty.example.test":    {},
}

// TestCheckHost: the host of a webhook sent through a proxy is refused when it is or resolves
// to a private address (any of its addresses), or cannot be resolved.
func TestCheckHost(t *testing.T) {
	tests := []struct {
		host    string
		private string // the refused address; "" when allowed
		fails   bool
	}{
		{host: "hooks.example.test"},
		{host: "203.0.113.50"},
		{host: "2606:4700::1111"},
		{host: "internal.example.test", private: "10.0.0.8"},
		{host: "mixed.example.test", private: "fd00::1"},
		{host: "metadata.example.test", private: "169.254.169.254"},
		{host: "10.1.2.3", private: "10.1.2.3"},
		{host: "127.0.0.1", private: "127.0.0.1"},
		{host: "::1", private: "::1"},
		{host: "fe80::1%eth0", private: "fe80::1%eth0"},
		{host: "nowhere.example.test", fails: true},
		{host: "empty.example.test", fails: true},
	}
	for _, tc := range tests {
		err := checkHost(context.Background(), names, tc.host)
		var pa *ErrPrivateAddress
		switch {
		case tc.private != "":
			if !errors.As(err, &pa) || pa.Addr.String() != tc.private {
				t.Errorf("checkHost(%s) = %v, want %s refused", tc.host, err, tc.private)
			}
		case tc.fails:
			if err == nil || errors.As(err, &pa) || !strings.Contains(err.Error(), tc.host) {
				t.Errorf("checkHost(%s) = %v, want an error naming the host", tc.host, err)
			}
		case err != nil:
			t.Errorf("checkHost(%s) = %v, want it allowed", tc.host, err)
		}
	}
}

// rewriteDialer connects to host:port names through a table of addresses (NO_PROXY test).
type rewriteDialer map[string]string

func (r rewriteDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if to, ok := r[addr]; ok {
		addr = to
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// TestDeliveriesThroughAProxy sends webhooks through a real forward proxy on loopback: the
// proxy itself may be on a loopback address, the SSRF guard applies to the webhook's host (a
// name resolving to a private address, or a private address, is refused before anything is
// sent), allow_private skips it, NO_PROXY goes direct, and https goes through a CONNECT tunnel.
func TestDeliveriesThroughAProxy(t *testing.T) {
	var received atomic.Int32
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-id") == "msg_1" {
			received.Add(1)
		}
	}))
	defer rx.Close()
	tlsRx := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { received.Add(1) }))
	defer tlsRx.Close()
	_, port, _ := net.SplitHostPort(rx.Listener.Addr().String())
	_, tlsPort, _ := net.SplitHostPort(tlsRx.Listener.Addr().String())
	// Behind the proxy, every name reaches the receivers.
	proxy := proxytest.Start(t, func(hostport string) string {
		if strings.HasSuffix(hostport, ":"+tlsPort) {
			return tlsRx.Listener.Addr().String()
		}
		return rx.Listener.Addr().String()
	})
	viaProxy := httpenv.ProxyFunc(&httpproxy.Config{HTTPProxy: proxy.URL, HTTPSProxy: proxy.URL})
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		noProxy      string
		proxied      bool   // the proxy saw the request
		refused      string // the private address refused
		fails        string // another error, by a part of its text
	}{
		{name: "public name", url: "http://hooks.example.test:" + port + "/h", proxied: true},
		{name: "name of a private address", url: "http://internal.example.test:" + port + "/h", refused: "10.0.0.8"},
		{name: "private address", url: "http://10.9.8.7:" + port + "/h", refused: "10.9.8.7"},
		{name: "one private address among others", url: "http://mixed.example.test:" + port + "/h", refused: "fd00::1"},
		{name: "unresolvable name", url: "http://nowhere.example.test:" + port + "/h", fails: "cannot be checked"},
		{name: "loopback goes direct, and is refused", url: rx.URL + "/h", refused: "127.0.0.1"},
		{name: "allow_private", url: "http://internal.example.test:" + port + "/h", allowPrivate: true, proxied: true},
		{name: "NO_PROXY", url: "http://hooks.example.test:" + port + "/h", allowPrivate: true, noProxy: "hooks.example.test"},
		{name: "https through CONNECT", url: "https://example.com:" + tlsPort + "/h", proxied: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			received.Store(0)
			before := proxy.Total()
			pf, dial := viaProxy, dialer(nil) // the guarded net.Dialer
			if tc.noProxy != "" {
				pf = httpenv.ProxyFunc(&httpproxy.Config{HTTPProxy: proxy.URL, HTTPSProxy: proxy.URL, NoProxy: tc.noProxy})
				dial = rewriteDialer{"hooks.example.test:" + port: rx.Listener.Addr().String()}
			}
			client := newHTTPClient(tc.allowPrivate, 5*time.Second, pf, names, dial)
			if g, ok := client.Transport.(*guarded); ok && strings.HasPrefix(tc.url, "https") {
				g.proxied.TLSClientConfig = tlsRx.Client().Transport.(*http.Transport).TLSClientConfig
			}
			e := endpoint(t, EndpointConfig{URL: tc.url, Secrets: []webhook.Secret{secret(t)}, AllowPrivate: tc.allowPrivate})
			res, err := Send(context.Background(), client, e, Message{ID: "msg_1", Type: "ping"}, time.Now())
			var pa *ErrPrivateAddress
			switch {
			case tc.refused != "":
				if !errors.As(err, &pa) || pa.Addr.String() != tc.refused {
					t.Errorf("Send = %v, want %s refused", err, tc.refused)
				}
			case tc.fails != "":
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Errorf("Send = %v, want an error saying %q", err, tc.fails)
				}
			case err != nil || !res.OK():
				t.Errorf("Send = %+v, %v; want it delivered", res, err)
			}
			delivered := tc.refused == "" && tc.fails == ""
			if got := received.Load(); delivered != (got == 1) {
				t.Errorf("the receiver got %d requests, want delivered=%v", got, delivered)
			}
			if got := proxy.Total() - before; tc.proxied != (got == 1) {
				t.Errorf("the proxy served %d requests, want proxied=%v", got, tc.proxied)
			}
		})
	}
}

// TestNewHTTPClientReadsTheProxyEnvironment: HTTP_PROXY and NO_PROXY as they are when the
// client is made.
func TestNewHTTPClientReadsTheProxyEnvironment(t *testing.T) {
	rx := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer rx.Close()
	proxy := proxytest.Start(t, func(string) string { return rx.Listener.Addr().String() })
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "http_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(v, "")
	}
	t.Setenv("HTTP_PROXY", proxy.URL)
	e := endpoint(t, EndpointConfig{URL: "http://hooks.example.test/h", Secrets: []webhook.Secret{secret(t)}, AllowPrivate: true})
	res, err := Send(context.Background(), NewHTTPClient(true, 5*time.Second), e, Message{ID: "msg_1", Type: "ping"}, time.Now())
	if err != nil || !res.OK() || proxy.Hits("hooks.example.test") != 1 {
		t.Fatalf("Send = %+v, %v (proxy hits %d); want it delivered through HTTP_PROXY", res, err, proxy.Hits("hooks.example.test"))
	}
	t.Setenv("NO_PROXY", ".example.test")
	if _, err := Send(context.Background(), NewHTTPClient(true, 5*time.Second), e, Message{ID: "msg_1", Type: "ping"}, time.Now()); err == nil || proxy.Total() != 1 {
		t.Errorf("with NO_PROXY: Send = %v (proxy hits %d); want a direct attempt, which cannot resolve the name", err, proxy.Total())
	}
}

// TestGuardRefusesHiddenRanges (issue 30, point 6): a webhook's address in a range that leads
// inside (NAT64 or 6to4 around a private IPv4 address, benchmarking, IETF, reserved) is
// refused at dial time.
func TestGuardRefusesHiddenRanges(t *testing.T) {
	for _, addr := range []string{"64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "198.18.0.1", "192.0.0.170", "240.0.0.1"} {
		a := netip.MustParseAddr(addr)
		err := refusePrivate("tcp", netip.AddrPortFrom(a, 443).String(), nil)
		var pe *ErrPrivateAddress
		if !errors.As(err, &pe) {
			t.Errorf("dialling %s = %v, want refused as private", addr, err)
		}
	}
}
