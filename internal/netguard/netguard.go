// Package netguard says which addresses a connection the bridge makes on someone else's say
// (a webhook target, a link in a source's payload) must not reach by default: this machine,
// private networks, link-local (cloud metadata), and the special ranges that lead to them, with
// the IPv4 address inside an IPv6 one (NAT64, 6to4, IPv4-compatible) checked as itself.
package netguard

import "net/netip"

// blocked are IANA's special-purpose ranges (RFC 6890 and its registries) that are not covered
// by netip's own predicates and are not globally reachable, or hide where they lead.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("192.88.99.0/24"),    // 6to4 relay anycast (RFC 7526, deprecated)
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking (RFC 2544), often internal
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, and 255.255.255.255
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("100::/64"),          // discard-only (RFC 6666)
	netip.MustParsePrefix("2001::/32"),         // Teredo: the IPv4 inside is obfuscated
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("fec0::/10"),         // site-local (deprecated, RFC 3879)
	netip.MustParsePrefix("::/128"),            // unspecified
	netip.MustParsePrefix("2001:10::/28"),      // ORCHID
	netip.MustParsePrefix("2001:20::/28"),      // ORCHIDv2
	netip.MustParsePrefix("5f00::/16"),         // SRv6 SIDs (RFC 9602)
	netip.MustParsePrefix("3fff::/20"),         // documentation (RFC 9637)
	netip.MustParsePrefix("2620:4f:8000::/48"), // AS112 (direct delegation), not a destination
}

// Embedding prefixes: an IPv6 address in one of them carries an IPv4 address, which is where
// the packet goes.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 (RFC 6052): the last 32 bits
	sixto4 = netip.MustParsePrefix("2002::/16")    // 6to4 (RFC 3056): bits 16 to 47
	compat = netip.MustParsePrefix("::/96")        // IPv4-compatible (RFC 4291, deprecated)
)

// Private reports whether a is an address the bridge must not reach unless allowed: loopback,
// private, link-local, unspecified, multicast, the special ranges above, and any IPv6 address
// whose embedded IPv4 address is one of those.
func Private(a netip.Addr) bool {
	a = a.Unmap()
	if v4, ok := embedded(a); ok {
		return Private(v4)
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// embedded returns the IPv4 address inside a NAT64, 6to4 or IPv4-compatible IPv6 address.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixto4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case compat.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return netip.Addr{}, false
}
