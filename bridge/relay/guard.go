package relay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/transcript-bridge/bridge/internal/httpenv"
	"github.com/transcript-bridge/bridge/internal/netguard"
)

// ErrPrivateAddress is returned when an endpoint resolves to an address it may not reach.
type ErrPrivateAddress struct {
	Addr netip.Addr
	// Host is the endpoint's host name when the address is one it resolved to ("" when the
	// URL named the address itself, or the address was the one dialled).
	Host string
}

func (e *ErrPrivateAddress) Error() string {
	at := e.Addr.String()
	if e.Host != "" {
		at = fmt.Sprintf("%s (%s)", e.Host, e.Addr)
	}
	return fmt.Sprintf("refused to connect to %s: a loopback, private, link-local or reserved address (set allow_private on the endpoint to permit it)", at)
}

// private reports whether a is an address webhooks must not reach by default
// (netguard.Private: loopback, private, link-local, reserved, and the IPv4 address inside
// NAT64 and 6to4 addresses).
func private(a netip.Addr) bool { return netguard.Private(a) }

// resolver looks host names up (net.DefaultResolver; a fake in tests).
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dialer opens connections (a net.Dialer; a wrapper in tests).
type dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// NewHTTPClient returns the client that sends webhooks: no redirects followed (a 3xx is an
// answer, and a failure), a timeout per attempt, the proxy of the environment (HTTPS_PROXY,
// HTTP_PROXY, NO_PROXY, read now), and unless allowPrivate the SSRF guard on the webhook's own
// host, never on the proxy's (which may well be on a private or loopback address):
//   - sent directly, the address actually dialled is checked, so a name that resolves (or
//     re-resolves) to a private address is refused;
//   - sent through a proxy, which resolves the name itself, the host is resolved here first and
//     refused when any of its addresses is private, or when it cannot be resolved.
func NewHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	return newHTTPClient(allowPrivate, timeout, httpenv.Proxy(), net.DefaultResolver, nil)
}

// IdleConnsPerHost is how many kept-alive connections an endpoint's client keeps idle per
// host (and per transport: direct and proxied), each for 90 s.
const IdleConnsPerHost = 4

// newHTTPClient is NewHTTPClient with its proxy function, resolver and dialer (nil: a
// net.Dialer) given.
func newHTTPClient(allowPrivate bool, timeout time.Duration, proxy func(*http.Request) (*url.URL, error), res resolver, dial dialer) *http.Client {
	if dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		if !allowPrivate {
			d.Control = refusePrivate
		}
		dial = d
	}
	transport := func(proxy func(*http.Request) (*url.URL, error), dial dialer) *http.Transport {
		return &http.Transport{
			Proxy:                 proxy,
			DialContext:           dial.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   IdleConnsPerHost,
			IdleConnTimeout:       90 * time.Second,
		}
	}
	var rt http.RoundTripper = transport(proxy, dial)
	if !allowPrivate {
		// Two transports, so the dial guard sees only webhook hosts and never the proxy.
		plain := &net.Dialer{Timeout: 10 * time.Second}
		rt = &guarded{proxy: proxy, resolver: res, direct: transport(nil, dial), proxied: transport(proxy, plain)}
	}
	return &http.Client{
		Transport:     rt,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// refusePrivate is the dialer's check of the address about to be connected to.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: %w", address, err)
	}
	if private(ap.Addr()) {
		return &ErrPrivateAddress{Addr: ap.Addr()}
	}
	return nil
}

// guarded sends a request directly, with the dial guard, or through the environment's proxy
// once its host has passed checkHost.
type guarded struct {
	proxy           func(*http.Request) (*url.URL, error)
	resolver        resolver
	direct, proxied *http.Transport
}

// RoundTrip implements http.RoundTripper.
func (g *guarded) RoundTrip(req *http.Request) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	via, err := g.proxy(req)
	if err != nil {
		return fail(err)
	}
	if via == nil {
		return g.direct.RoundTrip(req)
	}
	if err := checkHost(req.Context(), g.resolver, req.URL.Hostname()); err != nil {
		return fail(err)
	}
	return g.proxied.RoundTrip(req)
}

// CloseIdleConnections closes the connections the endpoints' clients keep alive between
// deliveries; those in use are left alone.
func (r *Relay) CloseIdleConnections() {
	r.init()
	for _, c := range r.clients {
		c.CloseIdleConnections()
	}
}

// CloseIdleConnections closes the idle connections of both transports (http.Client calls it).
func (g *guarded) CloseIdleConnections() {
	g.direct.CloseIdleConnections()
	g.proxied.CloseIdleConnections()
}

// checkHost refuses host when it is, or resolves to, an address webhooks must not reach, or
// when it cannot be resolved (then nothing says where the proxy would connect).
func checkHost(ctx context.Context, res resolver, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if private(a) {
			return &ErrPrivateAddress{Addr: a}
		}
		return nil
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("refused to send to %s through the proxy: its address cannot be checked (set allow_private on the endpoint to skip the check): %w", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("refused to send to %s through the proxy: it resolves to no address", host)
	}
	for _, a := range addrs {
		if private(a) {
			return &ErrPrivateAddress{Addr: a, Host: host}
		}
	}
	return nil
}
