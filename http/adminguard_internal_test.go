package http

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/crtx-market/crtx"
)

// Guesses spread over many addresses meet a ceiling of their own; an IPv6
// host's /64 counts as one address; the right token costs nothing.
func TestAdminGuessCeiling(t *testing.T) {
	g := newAdminGuard("right")
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
	g = newAdminGuard("right")
	for i := range adminGlobalBurst {
		if err := from(fmt.Sprintf("10.0.%d.%d:1", i/200, i%200)); crtx.ErrorCode(err) != crtx.CodeInvalidAPIKey {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if err := from("192.0.2.1:1"); crtx.ErrorCode(err) != crtx.CodeRateLimited {
		t.Errorf("a guess past the ceiling from a new address: %v", err)
	}

	g = newAdminGuard("right")
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
