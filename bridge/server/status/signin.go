package status

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Refused sign-ins are limited per client address: the first few are free, then each waits
// twice as long as the one before, up to a quarter of an hour. A wrong token guessed from one
// address never keeps the admin at another out.
const (
	signinFree    = 5                // refused sign-ins from an address before it waits
	signinWaitMin = time.Second      // the first wait
	signinWaitMax = 15 * time.Minute // the longest
	signinForget  = time.Hour        // an address quiet this long starts afresh
	signinTracked = 10000            // addresses remembered at most (a flood from many evicts the quietest)
)

// signins counts refused sign-ins by client address.
type signins struct {
	mu   sync.Mutex
	by   map[string]*refusals
	now  func() time.Time
	free int
}

// refusals is one address's refused sign-ins.
type refusals struct {
	n     int
	last  time.Time
	until time.Time // no sign-in from the address before then
	told  bool      // its lockout was written to the audit log
}

func newSignins(now func() time.Time) *signins {
	return &signins{by: map[string]*refusals{}, now: now, free: signinFree}
}

// wait returns how long addr must still wait before it may try again, zero when it may, and
// whether this is the first refusal of the current lockout (to be audited once).
func (s *signins) wait(addr string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.by[addr]
	if r == nil {
		return 0, false
	}
	d := r.until.Sub(s.now())
	if d <= 0 {
		return 0, false
	}
	first := !r.told
	r.told = true
	return d, first
}

// refused counts a refused sign-in from addr and returns the wait it now has before the next.
func (s *signins) refused(addr string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r := s.by[addr]
	if r == nil || now.Sub(r.last) > signinForget {
		if len(s.by) >= signinTracked {
			s.evict(now)
		}
		r = &refusals{}
		s.by[addr] = r
	}
	r.n++
	r.last = now
	r.told = false
	if r.n <= s.free {
		return 0
	}
	d := min(signinWaitMin<<min(r.n-s.free-1, 20), signinWaitMax)
	r.until = now.Add(d)
	return d
}

// succeeded forgets addr's refusals.
func (s *signins) succeeded(addr string) {
	s.mu.Lock()
	delete(s.by, addr)
	s.mu.Unlock()
}

// evict drops the addresses quiet past signinForget, and then, while the map is still full,
// one in ten of the rest (a flood from many addresses costs one scan per thousand, not one a
// request).
func (s *signins) evict(now time.Time) {
	for a, r := range s.by {
		if now.Sub(r.last) > signinForget {
			delete(s.by, a)
		}
	}
	for a := range s.by {
		if len(s.by) < signinTracked*9/10 {
			break
		}
		delete(s.by, a)
	}
}

// limitKey is the key refusals are counted under: an IPv4 address, or an IPv6 address's /64
// (one host is given a whole /64, and would otherwise have 2^64 addresses to guess from).
func limitKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Is4In6() {
		return addr
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// clientAddr is the address of the client behind r: the connection's own, or, when that is one
// of the trusted proxies, the nearest address in X-Forwarded-For that is not (a client can
// prepend anything to that header; only what the trusted proxies appended counts).
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !inPrefixes(addr, trusted) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := parseHop(strings.TrimSpace(hops[i]))
		if err != nil {
			return addr.String() // an unreadable hop: the last trusted proxy is all that is known
		}
		if !inPrefixes(hop.Unmap(), trusted) {
			return hop.Unmap().String()
		}
		addr = hop
	}
	return addr.String()
}

// parseHop reads one X-Forwarded-For hop: an address, with or without a port ("192.0.2.7:4711",
// "[2001:db8::1]:4711", as some load balancers write them).
func parseHop(h string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a, nil
	}
	ap, err := netip.ParseAddrPort(h)
	return ap.Addr(), err
}

// viaTLS reports whether the browser reached the page over TLS: to this server, or to a
// trusted proxy that says so in X-Forwarded-Proto.
func viaTLS(r *http.Request, trusted []netip.Prefix) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && inPrefixes(addr, trusted) && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
