package gate

import (
	"net/http/httptest"
	"testing"
)

// A trusted proxy's forwarding headers name the client: the nearest hop
// that is not a trusted proxy itself, from Forwarded's for= or else
// X-Forwarded-For; anyone else's are ignored.
func TestForwarded(t *testing.T) {
	p, err := ParseProxies("10.0.0.0/8, 192.168.1.7 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, peer, xff, fwd, want string
		proxied                    bool
	}{
		{"no proxy", "203.0.113.9:5000", "1.2.3.4", "", "203.0.113.9", false},
		{"a trusted proxy", "10.1.2.3:5000", "198.51.100.7", "", "198.51.100.7", true},
		{"through two", "10.1.2.3:5000", "198.51.100.7, 10.9.9.9", "", "198.51.100.7", true},
		{"a forged first hop", "10.1.2.3:5000", "6.6.6.6, 198.51.100.7", "", "198.51.100.7", true},
		{"two headers", "192.168.1.7:80", "", "", "192.168.1.7", true},
		{"Forwarded first", "10.1.2.3:5000", "1.1.1.1", `for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`, "2001:db8::1", true},
		{"an obfuscated hop", "10.1.2.3:5000", "", "for=_hidden", "10.1.2.3", true},
		{"IPv6 loopback", "[::1]:5000", "198.51.100.8", "", "198.51.100.8", true},
		{"all trusted", "10.1.2.3:5000", "10.0.0.1", "", "10.0.0.1", true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if c.fwd != "" {
			r.Header.Set("Forwarded", c.fwd)
		}
		got := p.Forwarded(r)
		if ClientIP(got) != c.want || FromProxy(got) != c.proxied {
			t.Errorf("%s: client %s (through a proxy: %v), want %s (%v)", c.name, ClientIP(got), FromProxy(got), c.want, c.proxied)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1/8/2"} {
		if _, err := ParseProxies(bad); err == nil {
			t.Errorf("ParseProxies(%q) took it", bad)
		}
	}
	if r := httptest.NewRequest("GET", "/", nil); Proxies(nil).Forwarded(r) != r {
		t.Error("without trusted proxies a request is changed")
	}
}
