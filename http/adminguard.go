package http

import (
	"crypto/subtle"
	"net/http"
	"net/netip"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
)

// An admin token is long enough (the daemon refuses one shorter than
// MinAdminToken) that guessing it is hopeless from any number of
// addresses, so no limit covers all addresses together: one would let
// wrong guesses from many addresses lock the operator out. Each address
// may still fail adminBurst times, then once per adminEvery, which keeps
// one client from flooding the comparison and the logs. A throttled
// address is refused before its token is compared, so that the answer to
// a guess says nothing while it lasts (a right token from there waits
// too); an address that gives the right token costs nothing.
const (
	adminBurst = 5
	adminEvery = 12 * time.Second
	// MinAdminToken is the fewest characters an admin token may have.
	MinAdminToken = 32
)

// adminGuard checks the admin token for the admin API and the operator's
// sign-in, throttling failed guesses per address.
type adminGuard struct {
	token   *gate.Secret
	perAddr *gate.Limiter
}

func newAdminGuard(token *gate.Secret) *adminGuard {
	return &adminGuard{token: token,
		perAddr: gate.NewLimiter(1/adminEvery.Seconds(), adminBurst)}
}

// check admits given as the admin token sent from r's address; a wrong
// one is invalid_api_key, and one sent while guesses from that address
// are throttled is rate_limited.
func (g *adminGuard) check(r *http.Request, given string) error {
	addr, now := guesser(r), time.Now()
	if retry := g.perAddr.Peek(addr, now); retry > 0 {
		return gate.RateLimited(retry, "too many wrong admin tokens from this address; try again in %d seconds", retry)
	}
	if subtle.ConstantTimeCompare([]byte(given), []byte(g.token.Get())) != 1 {
		g.perAddr.Charge(addr, now)
		return crtx.Errorf(crtx.CodeInvalidAPIKey, "the admin token is not valid")
	}
	return nil
}

// guesser names the client address a guess is counted against: an IPv6
// address by its /64, which one host commonly holds whole.
func guesser(r *http.Request) string {
	a, err := netip.ParseAddr(gate.ClientIP(r))
	if err != nil {
		return gate.ClientIP(r)
	}
	if a = a.Unmap(); a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// CheckAdminToken admits given as the admin token sent with r, counting a
// wrong one against r's address as the admin API does; the operator's
// sign-in page checks its form with it, so both share one budget of
// guesses.
func (s *Server) CheckAdminToken(r *http.Request, given string) error {
	if s.adminToken.Get() == "" {
		return crtx.Errorf(crtx.CodeNotFound, "the admin API is off: start crtxd with --admin-token-file")
	}
	return s.guard.check(r, given)
}
