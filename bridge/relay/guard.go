package relay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrPrivateAddress is returned when an endpoint resolves to an address it may not reach.
type ErrPrivateAddress struct {
	Addr netip.Addr
}

func (e *ErrPrivateAddress) Error() string {
	return fmt.Sprintf("refused to connect to %s: a loopback, private or link-local address (set allow_private on the endpoint to permit it)", e.Addr)
}

// private reports whether a is an address webhooks must not reach by default.
func private(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(a) || // carrier-grade NAT
		netip.MustParsePrefix("0.0.0.0/8").Contains(a)
}

// NewHTTPClient returns the client that sends webhooks: no redirects followed (a 3xx is an
// answer, and a failure), a timeout per attempt, and unless allowPrivate a check of the address
// actually dialled, so a name that resolves (or re-resolves) to a private address is refused.
func NewHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refused to connect to %q: %w", address, err)
			}
			if private(ap.Addr()) {
				return &ErrPrivateAddress{Addr: ap.Addr()}
			}
			return nil
		}
	}
	transport := &http.Transport{
		Proxy: nil, // a proxy would hide the address that is dialled
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport:     transport,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
