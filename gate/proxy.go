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
// load balancers'. Anyone can send X-Forwarded-For, Forwarded or
// X-Request-Id, so those of every other peer are ignored.
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
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR", s)
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
	a = a.Unmap()
	for _, n := range p {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

type forwardedKey struct{}

// Forwarded is r as its client sent it. From a trusted proxy, its
// RemoteAddr becomes the client the proxies name: walking the chain of
// Forwarded's for= (RFC 7239), else X-Forwarded-For's, from the nearest
// hop, the first address that is not a trusted proxy itself; and r
// carries that it came through one (FromProxy). From anyone else, r is
// unchanged.
func (p Proxies) Forwarded(r *http.Request) *http.Request {
	if len(p) == 0 || !p.trusts(ClientIP(r)) {
		return r
	}
	hops := forwardedFor(r.Header.Values("Forwarded"))
	if len(hops) == 0 {
		for _, v := range r.Header.Values("X-Forwarded-For") {
			for _, h := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
	}
	client := ""
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			break // an obfuscated or unknown hop: nothing past it is known
		}
		client = a.Unmap().String()
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

// forwardedFor is the for= addresses of Forwarded headers, in order: a
// quoted IPv6 address in brackets, and a port, are taken off.
func forwardedFor(values []string) []string {
	var out []string
	for _, v := range values {
		for _, elem := range strings.Split(v, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if !ok || !strings.EqualFold(k, "for") {
					continue
				}
				val = strings.Trim(val, `"`)
				if strings.HasPrefix(val, "[") {
					val, _, _ = strings.Cut(val[1:], "]")
				} else if host, _, err := net.SplitHostPort(val); err == nil {
					val = host
				}
				out = append(out, val)
			}
		}
	}
	return out
}
