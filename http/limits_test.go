package http_test

import (
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

func TestRateLimits(t *testing.T) {
	t.Run("per address on sign-in and airdrops", func(t *testing.T) {
		e := start(t, func(c *daemon.Config) { c.RateLimitIP = 5 })
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
		_, err := e.anon.Airdrop(ctx, w.address, usdc("1"))
		wantCode(t, err, 429, "rate_limited")
		// Reads are not limited.
		if err := e.anon.Do(ctx, "GET", "/v1/agents", "", nil, nil); err != nil {
			t.Errorf("browsing was limited: %v", err)
		}
		time.Sleep(1200 * time.Millisecond)
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
