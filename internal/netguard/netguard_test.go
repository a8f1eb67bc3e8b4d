package netguard

import (
	"net/netip"
	"testing"
)

func TestPrivate(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"100.64.0.1", true}, {"0.0.0.0", true}, {"224.0.0.1", true},
		{"198.18.0.1", true}, {"198.19.255.255", true}, {"192.0.0.8", true}, {"240.0.0.1", true},
		{"255.255.255.255", true}, {"192.88.99.1", true},
		{"::1", true}, {"fd00::1", true}, {"fe80::1", true}, {"::", true}, {"ff02::1", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true},
		// NAT64 (RFC 6052) and 6to4 (RFC 3056) lead to the IPv4 address inside.
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::a00:1", true},
		{"64:ff9b::808:808", false},
		{"2002:7f00:1::", true}, {"2002:a9fe:a9fe::1", true}, {"2002:c0a8:101::", true},
		{"2002:808:808::1", false},
		{"::7f00:1", true}, {"::a00:1", true}, // IPv4-compatible
		{"64:ff9b:1::808:808", true}, {"2001:0:4136:e378::1", true}, {"fec0::1", true}, {"100::1", true},
		// Public.
		{"8.8.8.8", false}, {"203.0.113.7", false}, {"2606:4700:4700::1111", false}, {"198.20.0.1", false},
	} {
		if got := Private(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Private(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
