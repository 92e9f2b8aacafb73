package e2e_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/crtx-market/crtx/daemon"
)

// resolver answers for made-up names. "rebind.test" answers a public
// address the first time and a private one after, as a DNS-rebinding
// attacker would. No test here ever dials a public address: every public
// answer is consumed by a URL check, and every dial gets a private one.
type resolver struct {
	mu    sync.Mutex
	calls map[string]int
}

var names = map[string]string{
	"loopback.test": "127.0.0.1", "loopback6.test": "::1", "ten.test": "10.1.2.3", "oneseventwo.test": "172.20.0.5",
	"oneninetwo.test": "192.168.7.7", "metadata.test": "169.254.169.254", "ula.test": "fc00::5", "mapped.test": "::ffff:10.0.0.1",
}

func (r *resolver) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[host]++
	if host == "rebind.test" {
		if r.calls[host] == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	if ip, ok := names[host]; ok {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
	return nil, errors.New("no such host")
}

func TestEndpointsMustBePublic(t *testing.T) {
	res := &resolver{calls: map[string]int{}}
	e := start(t, func(c *daemon.Config) { c.AllowPrivateEndpoints = false; c.LookupIP = res.lookup })
	svc := newService(t, echo) // signs well; only its key is used here
	_, c := e.creatorOf("100")
	try := func(t *testing.T, endpoint string, status int, code string) string {
		t.Helper()
		_, err := list(c, params(svc, "0.05").with("endpoint_url", endpoint))
		ce := wantCode(t, err, status, code)
		if !strings.Contains(ce.Message, "endpoint_url") && !strings.Contains(ce.Message, "not public") {
			t.Errorf("%s: message %q says nothing of the address", endpoint, ce.Message)
		}
		return ce.Message
	}
	for _, lit := range []string{"127.0.0.1", "[::1]", "10.0.0.1", "172.16.0.1", "172.31.255.1", "192.168.1.1",
		"169.254.169.254", "[fc00::1]", "[fd12:3456::1]", "[::ffff:127.0.0.1]", "[::ffff:a9fe:a9fe]", "0.0.0.0"} {
		t.Run("literal "+lit, func(t *testing.T) { try(t, "https://"+lit+"/execute", 400, "invalid_request") })
	}
	for name, ip := range names {
		t.Run("name "+name, func(t *testing.T) {
			// What a name resolves to inside the marketplace's network is
			// not the caller's to learn.
			if msg := try(t, "https://"+name+"/execute", 422, "endpoint_unreachable"); strings.Contains(msg, ip) {
				t.Errorf("message %q names the resolved address %s", msg, ip)
			}
		})
	}
	t.Run("unknown name", func(t *testing.T) {
		if msg := try(t, "https://nowhere.test/execute", 422, "endpoint_unreachable"); strings.Contains(msg, "no such host") {
			t.Errorf("message %q repeats the resolver", msg)
		}
	})
	t.Run("rebinding", func(t *testing.T) {
		_, err := list(c, params(svc, "0.05").with("endpoint_url", "https://rebind.test/execute"))
		ce := wantCode(t, err, 422, "endpoint_unreachable")
		if !strings.Contains(ce.Message, "not public") || res.calls["rebind.test"] != 2 {
			t.Errorf("rebinding: %q after %d lookups; want a dial-time refusal", ce.Message, res.calls["rebind.test"])
		}
	})
	t.Run("plain http", func(t *testing.T) { try(t, "http://loopback.test/execute", 400, "invalid_request") })
	t.Run("test tool", func(t *testing.T) {
		rep, err := c.TestExecution(ctx, "https://169.254.169.254/latest/meta-data", svc.PubKey)
		if err != nil || rep.Reachable || len(rep.Problems) == 0 {
			t.Errorf("test tool to the metadata address: %+v, %v", rep, err)
		}
	})
	if page, _ := e.anon.Agents(ctx, nil); page.Total != 0 {
		t.Errorf("%d agents were listed", page.Total)
	}
}
