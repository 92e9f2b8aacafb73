package gate

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the networks whose forwarding headers crtxd believes: its
// load balancers'. Anyone can send X-Forwarded-For or X-Request-Id, so
// those of every other peer are ignored.
type Proxies []netip.Prefix

// ParseProxies reads a comma-separated list of CIDRs or addresses.
func ParseProxies(list string) (Proxies, error) {
	var p Proxies
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR", s)
			}
			p = append(p, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		n, err := netip.ParsePrefix(s)
		if err != nil || n.Addr().Is4In6() {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR (IPv4 ones written as IPv4)", s)
		}
		p = append(p, n.Masked())
	}
	return p, nil
}

func (p Proxies) trusts(addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, n := range p {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

type forwardedKey struct{}

// Forwarded is r as its client sent it. From a trusted proxy, its
// RemoteAddr becomes the client X-Forwarded-For names: walking from the
// nearest hop, the first address that is not a trusted proxy itself; and
// r carries that it came through one (FromProxy). From anyone else, r is
// unchanged. RFC 7239's Forwarded is not read: load balancers pass a
// client's own Forwarded header on untouched while they append to
// X-Forwarded-For, so believing it would let a client name its address.
func (p Proxies) Forwarded(r *http.Request) *http.Request {
	if len(p) == 0 || !p.trusts(ClientIP(r)) {
		return r
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := ""
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hostOf(strings.TrimSpace(hops[i])))
		if err != nil {
			break // an unknown or obfuscated hop: nothing past it is known
		}
		client = a.Unmap().WithZone("").String()
		if !p.trusts(client) {
			break
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), forwardedKey{}, true))
	if client != "" {
		r.RemoteAddr = net.JoinHostPort(client, "0")
	}
	return r
}

// FromProxy says r came through a trusted proxy (Proxies.Forwarded).
func FromProxy(r *http.Request) bool {
	ok, _ := r.Context().Value(forwardedKey{}).(bool)
	return ok
}

// hostOf is a hop without the port or brackets some proxies write
// ("203.0.113.7:4711", "[2001:db8::1]:4711").
func hostOf(hop string) string {
	if host, _, err := net.SplitHostPort(hop); err == nil {
		return host
	}
	return strings.Trim(hop, "[]")
}
