package market_test

import (
	"context"
	"crypto/ed25519"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/store/testdb"
)

// Ten executions wait for the one dispatch slot for a minute while an
// eleventh holds it. Their leases, and the running one's, are renewed
// together: one write every third of the lease between them all, not one
// each (ten thousand waiting would be thousands of writes a second). The
// minute passes on the bubble's clock (testing/synctest).
func TestLeasesRenewedTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &countingStore{Store: testdb.SQLite(t)}
		caller := newHeldCaller()
		_, authority, _ := ed25519.GenerateKey(nil)
		_, signer, _ := ed25519.GenerateKey(nil)
		const lease = 15 * time.Second
		m, err := market.New(store, market.Config{PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer,
			Caller: caller, MaxDispatches: 1, MaxDispatchShare: 1, Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Stop()
		agent, p := listAgent(t, store), payer(t, m)
		var ids []string
		for range 11 {
			e, err := m.Execute(ctx, p, agent, crtx.ExecuteParams{Task: "hold", Async: true}, "", "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		<-caller.called
		synctest.Wait() // one runs, ten wait
		before := store.writes.Load()
		const idle = time.Minute
		time.Sleep(idle)
		synctest.Wait()
		if n, most := store.writes.Load()-before, int64(idle/(lease/3)); n > most {
			t.Errorf("11 executions in flight for %s wrote %d times; want at most %d (one per third of the lease)", idle, n, most)
		}
		// Their leases held: each runs once, in turn, and fails as the
		// creator answers.
		close(caller.release)
		synctest.Wait()
		if n := len(caller.called); n != 10 {
			t.Errorf("the waiting executions reached the creator %d times, want 10", n)
		}
		for _, id := range ids {
			if e, _, err := m.GetExecution(ctx, p, id); err != nil || e.Status != crtx.ExecFailed {
				t.Errorf("execution %s: %s, %v; want failed", id, e.Status, err)
			}
		}
	})
}
