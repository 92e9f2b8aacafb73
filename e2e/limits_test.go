package e2e_test

import (
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

func TestRateLimits(t *testing.T) {
	t.Run("per address on sign-in and airdrops", func(t *testing.T) {
		// The marketplace's clock stands still but when the test moves it:
		// no budget refills between two requests, however slow the machine.
		base := time.Now()
		var moved atomic.Int64
		e := start(t, func(c *daemon.Config) {
			c.RateLimitIP = 5
			c.Now = func() time.Time { return base.Add(time.Duration(moved.Load())) }
		})
		w := newWallet(t)
		limited := 0
		for range 30 {
			_, err := e.anon.Challenge(ctx, w.address)
			if client.Code(err) == "rate_limited" {
				ce := wantCode(t, err, 429, "rate_limited")
				if n, perr := strconv.Atoi(ce.RetryAfter); perr != nil || n < 1 {
					t.Errorf("Retry-After = %q", ce.RetryAfter)
				}
				limited++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if limited < 15 {
			t.Errorf("only %d of 30 challenges were limited at 5 a second", limited)
		}
		// exhaust spends the address's budget again, so that what follows
		// meets the limit however slowly the machine runs (it refills 5 a
		// second).
		exhaust := func() {
			t.Helper()
			for range 100 {
				if _, err := e.anon.Challenge(ctx, w.address); client.Code(err) == "rate_limited" {
					return
				}
			}
			t.Fatal("the address's budget never ran out")
		}
		exhaust()
		_, err := e.anon.Airdrop(ctx, w.address, usdc("1"))
		wantCode(t, err, 429, "rate_limited")
		// So are the public requests that make the marketplace read the
		// chain.
		exhaust()
		_, err = e.anon.Reserves(ctx)
		wantCode(t, err, 429, "rate_limited")
		// So is asking for a deposit, before anything else is read.
		exhaust()
		res, err := e.http.Post(e.d.URL+"/v1/wallet/deposits", "application/json", strings.NewReader(`{"environment":"devnet","amount_usdc":1}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 429 {
			t.Errorf("a deposit request over the limit: %d", res.StatusCode)
		}
		// A wallet in a browser reads the refusal: it answers any origin.
		exhaust()
		req, _ := http.NewRequestWithContext(ctx, "POST", e.d.URL+"/v1/solana-pay/deposits/dep_x", strings.NewReader(`{"account":"`+w.address+`"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err = e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 429 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("a Solana Pay transaction request over the limit: %d %v", res.StatusCode, res.Header)
		}
		// Reads are not limited.
		if err := e.anon.Do(ctx, "GET", "/v1/agents", "", nil, nil); err != nil {
			t.Errorf("browsing was limited: %v", err)
		}
		moved.Add(int64(1200 * time.Millisecond))
		if _, err := e.anon.Challenge(ctx, w.address); err != nil {
			t.Errorf("after waiting: %v", err)
		}
	})
	t.Run("per key, when set", func(t *testing.T) {
		m := newMarket(t, "10", func(c *daemon.Config) { c.RateLimitKey = 2 })
		limited := 0
		for range 12 {
			if _, err := m.key.Wallet(ctx); client.Code(err) == "rate_limited" {
				limited++
			}
		}
		if limited == 0 {
			t.Error("a key over its rate was not limited")
		}
		// Another key of the same wallet has its own budget.
		if _, err := m.liveKey.Wallet(ctx); err != nil {
			t.Errorf("another key: %v", err)
		}
	})
	t.Run("executions in flight per key", func(t *testing.T) {
		m := newMarket(t, "10", func(c *daemon.Config) { c.MaxInFlightPerKey = 2 })
		agent := m.list(newService(t, slow(300*time.Millisecond)), "0.1")
		var mu sync.Mutex
		codes := map[string]int{} // error code ("" for none) → executions
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				_, err := m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
				mu.Lock()
				defer mu.Unlock()
				codes[client.Code(err)]++
			})
		}
		wg.Wait()
		if want := map[string]int{"": 2, "rate_limited": 4}; !maps.Equal(codes, want) {
			t.Errorf("error codes %v; want %v", codes, want)
		}
		// Refused executions took no money.
		if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9.8") {
			t.Errorf("balance %s", b.Available)
		}
	})
}

// Wrong admin tokens are throttled per address, on the admin API and the
// operator's sign-in alike, before the token is compared; the operator at
// another address is not held up.
func TestAdminGuessesThrottled(t *testing.T) {
	e := start(t)
	refused, limited := 0, 0
	for i := range 30 {
		_, err := e.anon.WithToken("guess-"+strconv.Itoa(i)).AdminDisputes(ctx, "")
		switch client.Code(err) {
		case "invalid_api_key":
			refused++
		case "rate_limited":
			ce := wantCode(t, err, 429, "rate_limited")
			if n, perr := strconv.Atoi(ce.RetryAfter); perr != nil || n < 1 {
				t.Errorf("Retry-After = %q", ce.RetryAfter)
			}
			limited++
		default:
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if refused != 5 || limited != 25 {
		t.Errorf("of 30 wrong admin tokens, %d were compared and %d throttled; want 5 and 25", refused, limited)
	}
	// While throttled, even the right token is not compared, so an answer
	// tells nothing; the sign-in page shares the budget.
	_, err := e.admin.AdminDisputes(ctx, "")
	wantCode(t, err, 429, "rate_limited")
	resp, _ := send(t, browserClient(t), "POST", e.d.URL+"/dashboard/operator/login", url.Values{"token": {"guess"}}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("operator sign-in while throttled: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	elsewhere := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	if _, err := e.admin.WithHTTPClient(elsewhere).AdminDisputes(ctx, ""); err != nil {
		t.Errorf("the right token from another address: %v", err)
	}
}

// Listing nonces are rows kept a day, so one wallet is issued 30, then one
// per 30 seconds, through the API and its creator pages together; another
// wallet is not held up. Reading the creator pages spends none: the
// listing form takes one the wallet holds open, and past the limit every
// page is still served.
func TestListingNoncesLimitedPerWallet(t *testing.T) {
	e := start(t)
	c := e.signIn(newWallet(t))
	b := browserClient(t)
	b.Jar.SetCookies(nil, []*http.Cookie{{Name: "crtx_session", Value: c.Token()}})
	if resp, _ := send(t, b, "GET", e.d.URL+"/dashboard/creator?tab=new", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the listing form: %s", resp.Status)
	}
	for i := range 29 {
		if _, err := c.ListingNonce(ctx); err != nil {
			t.Fatalf("nonce %d: %v", i, err)
		}
		if resp, _ := send(t, b, "GET", e.d.URL+"/dashboard/creator?tab=new", nil, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("the listing form after %d nonces: %s", i+2, resp.Status)
		}
	}
	_, err := c.ListingNonce(ctx)
	ce := wantCode(t, err, 429, "rate_limited")
	if n, perr := strconv.Atoi(ce.RetryAfter); perr != nil || n < 1 || n > 30 {
		t.Errorf("Retry-After = %q", ce.RetryAfter)
	}
	for _, tab := range []string{"", "new", "listings", "test"} {
		if resp, _ := send(t, b, "GET", e.d.URL+"/dashboard/creator?tab="+tab, nil, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("the creator page's %q tab past the limit: %s, want it served", tab, resp.Status)
		}
	}
	if _, err := e.signIn(newWallet(t)).ListingNonce(ctx); err != nil {
		t.Errorf("another wallet's nonce: %v", err)
	}
}
