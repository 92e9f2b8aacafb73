package http

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/crtx-market/crtx"

	"github.com/crtx-market/crtx/gate"
)

// Wrong tokens from ever new addresses hold up neither the operator at an
// address of their own nor a guess from a new address, which is compared
// (there is no ceiling over all addresses to lock the operator out); an
// IPv6 host's /64 counts as one address; the right token costs nothing.
func TestAdminGuessesPerAddress(t *testing.T) {
	g := newAdminGuard(gate.NewSecret("right"))
	send := func(addr, token string) error {
		r := httptest.NewRequest("GET", "/v1/admin/disputes", nil)
		r.RemoteAddr = addr
		return g.check(r, token)
	}
	from := func(addr string) error { return send(addr, "wrong") }
	for i := range 50 {
		if err := send("10.9.9.9:1", "right"); err != nil {
			t.Fatalf("the right token, call %d: %v", i, err)
		}
	}
	for i := range adminBurst {
		if err := from("10.9.9.9:1"); crtx.ErrorCode(err) != crtx.CodeInvalidAPIKey {
			t.Fatalf("wrong token %d after 50 right ones: %v", i, err)
		}
	}

	g = newAdminGuard(gate.NewSecret("right"))
	for i := range 1000 {
		for range adminBurst {
			if err := from(fmt.Sprintf("10.0.%d.%d:1", i/200, i%200)); crtx.ErrorCode(err) != crtx.CodeInvalidAPIKey {
				t.Fatalf("a guess from address %d: %v", i, err)
			}
		}
	}
	if err := send("192.0.2.1:1", "right"); err != nil {
		t.Errorf("the right token from a new address after 5,000 wrong ones from 1,000: %v", err)
	}
	if err := from("192.0.2.2:1"); crtx.ErrorCode(err) != crtx.CodeInvalidAPIKey {
		t.Errorf("a wrong token from a new address after 5,000: %v", err)
	}

	g = newAdminGuard(gate.NewSecret("right"))
	for i := range adminBurst {
		from(fmt.Sprintf("[2001:db8::%x]:1", i+1))
	}
	if err := from("[2001:db8::ffff:1]:1"); crtx.ErrorCode(err) != crtx.CodeRateLimited {
		t.Errorf("a guess from the same /64: %v", err)
	}
	if err := from("[2001:db8:0:1::1]:1"); crtx.ErrorCode(err) != crtx.CodeInvalidAPIKey {
		t.Errorf("a guess from another /64: %v", err)
	}
}
