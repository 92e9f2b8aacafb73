package market_test

import (
	"context"
	"crypto/ed25519"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
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
		m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer,
			Caller: caller, MaxDispatches: 1, MaxDispatchShare: 1, Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Stop()
		agent, p := listAgent(t, store), payer(t, m)
		var ids []string
		for range 11 {
			e, err := m.Executions.Execute(ctx, p, agent, crtx.ExecuteParams{Task: "hold", Async: true}, "", "")
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
			if e, _, err := m.Executions.GetExecution(ctx, p, id); err != nil || e.Status != crtx.ExecFailed {
				t.Errorf("execution %s: %s, %v; want failed", id, e.Status, err)
			}
		}
	})
}

// stallingStore, once stalled, holds the transactions the market runs at
// the guarded level (lease renewals among them) until gate closes: a
// writer too busy to take them.
type stallingStore struct {
	crtx.Store
	stalled atomic.Bool
	gate    chan struct{}
}

func (s *stallingStore) UpdateGuarded(ctx context.Context, fn func(crtx.Tx) error) error {
	if s.stalled.Load() {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.UpdateGuarded(ctx, fn)
}

// Replica A runs one execution and holds another in line for its one
// dispatch slot; its lease renewals stall, and replica B takes both over.
// When A's slot frees, the execution it held in line is B's: A leaves it
// to B rather than marking it its own again and dispatching it beside B.
func TestTakenOverWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db := testdb.SQLite(t)
		stalled := &stallingStore{Store: db, gate: make(chan struct{})}
		_, authority, _ := ed25519.GenerateKey(nil)
		_, signer, _ := ed25519.GenerateKey(nil)
		callerA, callerB := newHeldCaller(), newHeldCaller()
		a, err := market.New(stalled, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer,
			Caller: callerA, MaxDispatches: 1, MaxDispatchShare: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := market.New(db, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer, Caller: callerB})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Stop()
		defer a.Stop()
		agent, p := listAgent(t, db), payer(t, a)
		stalled.stalled.Store(true)
		running, err := a.Executions.Execute(ctx, p, agent, crtx.ExecuteParams{Task: "running", Async: true}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		<-callerA.called
		waiting, err := a.Executions.Execute(ctx, p, agent, crtx.ExecuteParams{Task: "waiting", Async: true}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		// Both leases run out while A cannot renew them; B claims both.
		time.Sleep(time.Minute)
		b.TakeOverAll(ctx)
		for range 2 {
			<-callerB.called
		}
		close(callerA.release) // A's slot frees
		synctest.Wait()
		if n := len(callerA.called); n != 0 {
			t.Errorf("A dispatched the execution B took over from its line (%d calls)", n)
		}
		close(callerB.release)
		close(stalled.gate)
		synctest.Wait()
		for _, id := range []string{running.ID, waiting.ID} {
			if e, _, err := b.Executions.GetExecution(ctx, p, id); err != nil || e.Status != crtx.ExecFailed {
				t.Errorf("execution %s: %s, %v; want failed", id, e.Status, err)
			}
		}
	})
}
