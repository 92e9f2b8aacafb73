package e2e_test

import (
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

// The daemon posts deferred credits and statistics by itself, within its
// interval: the creator reads the share as pending, then as available.
func TestDaemonRollsUp(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.RollupInterval = 20 * time.Millisecond })
	agent := m.list(newService(t, echo), "1")
	before, err := m.creatorC.Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.ran(t, m.liveKey, agent)
	deadline := time.Now().Add(5 * time.Second)
	for {
		w, err := m.creatorC.Wallet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := w.Balances[crtx.Mainnet]
		if b.Available == before.Balances[crtx.Mainnet].Available+rec.CreatorAmount && b.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("creator's balance never posted: %+v (was %+v, share %s)", b, before.Balances[crtx.Mainnet], rec.CreatorAmount)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a, err := m.anon.Agent(ctx, agent, crtx.Mainnet); err != nil || a.TotalExecutions != 1 {
		t.Errorf("stats = %+v, %v", a, err)
	}
}
