package gate

import (
	"net/http/httptest"
	"testing"
)

// A trusted proxy's X-Forwarded-For names the client: the nearest hop
// that is not a trusted proxy itself; a Forwarded header, which a client
// can send through a load balancer untouched, is not believed; anyone
// else's headers are ignored.
func TestForwarded(t *testing.T) {
	p, err := ParseProxies("10.0.0.0/8, 192.168.1.7 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, peer string
		xff        []string
		fwd, want  string
		proxied    bool
	}{
		{"no proxy", "203.0.113.9:5000", []string{"1.2.3.4"}, "", "203.0.113.9", false},
		{"a trusted proxy", "10.1.2.3:5000", []string{"198.51.100.7"}, "", "198.51.100.7", true},
		{"through two", "10.1.2.3:5000", []string{"198.51.100.7, 10.9.9.9"}, "", "198.51.100.7", true},
		{"a forged first hop", "10.1.2.3:5000", []string{"6.6.6.6, 198.51.100.7"}, "", "198.51.100.7", true},
		{"two header lines", "10.1.2.3:5000", []string{"6.6.6.6", "198.51.100.7"}, "", "198.51.100.7", true},
		{"hops with ports", "10.1.2.3:5000", []string{"[2001:db8::1]:4711, 198.51.100.9:80"}, "", "198.51.100.9", true},
		{"a client's own Forwarded", "10.1.2.3:5000", []string{"198.51.100.7"}, "for=6.6.6.6", "198.51.100.7", true},
		{"no header", "192.168.1.7:80", nil, "", "192.168.1.7", true},
		{"an obfuscated hop", "10.1.2.3:5000", []string{"_hidden"}, "", "10.1.2.3", true},
		{"IPv6 loopback", "[::1]:5000", []string{"198.51.100.8"}, "", "198.51.100.8", true},
		{"all trusted", "10.1.2.3:5000", []string{"10.0.0.1"}, "", "10.0.0.1", true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if c.fwd != "" {
			r.Header.Set("Forwarded", c.fwd)
		}
		got := p.Forwarded(r)
		if ClientIP(got) != c.want || FromProxy(got) != c.proxied {
			t.Errorf("%s: client %s (through a proxy: %v), want %s (%v)", c.name, ClientIP(got), FromProxy(got), c.want, c.proxied)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1/8/2", "::ffff:10.0.0.0/104"} {
		if _, err := ParseProxies(bad); err == nil {
			t.Errorf("ParseProxies(%q) took it", bad)
		}
	}
	if r := httptest.NewRequest("GET", "/", nil); Proxies(nil).Forwarded(r) != r {
		t.Error("without trusted proxies a request is changed")
	}
}
