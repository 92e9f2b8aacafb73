package dispatch

import (
	"net/netip"
)

var (
	// blocked are the ranges a creator endpoint or webhook may not reach:
	// loopback, private, shared, link-local (cloud metadata lives at
	// 169.254.169.254 and fd00:ec2::254), multicast, and reserved space.
	blocked = prefixes(
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "2001:db8::/32", "100::/64",
	)
	// last32 carry an IPv4 address in their last 32 bits: NAT64 (RFC 6052),
	// the one form of local-use NAT64 (RFC 8215) that puts it there, and
	// IPv4-translated space (SIIT, RFC 2765, ::ffff:0:a.b.c.d).
	last32 = prefixes("64:ff9b::/96", "64:ff9b:1::/96", "::ffff:0:0:0/96")
	// opaque hide their IPv4 address where no one can be sure of it:
	// local-use NAT64 in the forms where the network picks where it sits,
	// and Teredo.
	opaque = prefixes("64:ff9b:1::/48", "2001::/32")
	// compat4 is IPv4-compatible space (::a.b.c.d), sixTo4 6to4 (2002:a.b.c.d::).
	compat4, sixTo4 = netip.MustParsePrefix("::/96"), netip.MustParsePrefix("2002::/16")
)

// prefixes parses CIDR literals written in this file, so a bad one panics
// when the package loads.
func prefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, s := range cidrs {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func within(set []netip.Prefix, ip netip.Addr) bool {
	for _, p := range set {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

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
		case within(last32, ip) ||
			(compat4.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback()):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case within(opaque, ip):
			return false
		case sixTo4.Contains(ip):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return ip.Zone() == "" && !within(blocked, ip)
}
