package dispatch

import (
	"net/netip"
)

// blockedPrefixes are the ranges a creator endpoint or webhook may not
// reach: loopback, private, shared, link-local (cloud metadata lives at
// 169.254.169.254 and fd00:ec2::254), multicast, and reserved space.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "2001:db8::/32", "100::/64",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// nat64Local is local-use NAT64 (RFC 8215), where the network picks
	// where in the address the IPv4 one sits.
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	nat64Local96 = netip.MustParsePrefix("64:ff9b:1::/96")
	// siit is IPv4-translated space (RFC 2765), ::ffff:0:a.b.c.d.
	siit    = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	teredo  = netip.MustParsePrefix("2001::/32")
	compat4 = netip.MustParsePrefix("::/96")
)

// Public reports whether ip is an address a creator endpoint may be dialled
// at. IPv6 forms that carry an IPv4 address inside (mapped, compatible,
// NAT64, SIIT, 6to4) are judged by that IPv4 address; local-use NAT64 only
// in its one form whose IPv4 address is certain (the last 32 bits, the
// rest zero); Teredo is refused outright.
func Public(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip) || nat64Local96.Contains(ip) || siit.Contains(ip) ||
			(compat4.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback()):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case nat64Local.Contains(ip):
			return false
		case sixTo4.Contains(ip):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		case teredo.Contains(ip):
			return false
		}
	}
	if ip.Zone() != "" {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
