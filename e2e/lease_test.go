package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// While a creator works on a call, its execution's lease is renewed, so
// recovery (every 20 ms here) never takes the execution over and calls
// the creator a second time, however long the call lasts. The clock passes
// the lease several times over during the call.
func TestLeaseRenewedDuringLongCall(t *testing.T) {
	const lease = 700 * time.Millisecond
	m := newMarket(t, "10", func(c *daemon.Config) { c.Lease, c.RecoveryInterval = lease, 20*time.Millisecond })
	release := make(chan struct{})
	key := agentKey()
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			<-release
		}
		return "done", 0, nil
	}, creator.Options{})
	var requests atomic.Int32 // every POST, the listing's test request too
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	agent := m.listAt(srv.URL, h.PublicKey(), "0.1")
	before := requests.Load()

	done := make(chan error, 1)
	go func() {
		rec, err := m.key.Execute(ctx, agent, run("long"), client.ExecuteOptions{})
		if err == nil && rec.Status != crtx.ExecCompleted {
			err = fmt.Errorf("status %s", rec.Status)
		}
		done <- err
	}()
	for requests.Load() == before {
		time.Sleep(5 * time.Millisecond)
	}
	for range 6 {
		m.clock.Advance(200 * time.Millisecond)
		time.Sleep(300 * time.Millisecond)
	}
	if n := requests.Load() - before; n != 1 {
		t.Fatalf("the creator was called %d times during one long call", n)
	}
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := requests.Load() - before; n != 1 {
		t.Fatalf("the creator was called %d times", n)
	}
}

// An execution whose lease renewals stall past the lease (a writer too busy
// to take them) is claimed by recovery, which takes executions of this
// replica too whose lease ran out; the process already runs it, and goes
// on alone: the creator gets one request, not one more per claim.
func TestStalledLeaseDispatchedOnce(t *testing.T) {
	// Renewals come every third of a minute of real time, never during
	// the test, while the clock passes the lease at once.
	const lease = time.Minute
	m := newMarket(t, "10", func(c *daemon.Config) { c.Lease, c.RecoveryInterval = lease, 20*time.Millisecond })
	h := newHanging(t)
	agent := m.list(h.service, "0.1", map[string]any{"timeout_seconds": 300})
	acc, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "stalled", Async: true, TimeoutSeconds: ptr(300)}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	until(t, "the call to reach the creator", func() bool { return h.count("stalled") == 1 })
	m.clock.Advance(lease + time.Second)
	until(t, "recovery to claim the execution", func() bool {
		var e crtx.Execution
		err := m.d.Store.View(ctx, func(tx crtx.Tx) (err error) {
			e, err = tx.Executions.Execution(ctx, acc.ExecutionID)
			return err
		})
		return err == nil && e.Attempts > 0
	})
	// A second copy, had the claim started one, would reach the creator
	// beside the first, which it holds.
	time.Sleep(200 * time.Millisecond)
	if n := h.count("stalled"); n != 1 {
		t.Errorf("the creator got %d requests for the execution, want 1", n)
	}
	h.open("stalled")
	if rec, err := m.key.Wait(bounded(t), acc.ExecutionID, 20*time.Millisecond); err != nil || rec.Status != crtx.ExecCompleted {
		t.Fatalf("execution: %+v, %v", rec, err)
	}
	if n := h.count("stalled"); n != 1 {
		t.Errorf("the creator got %d requests for the execution, want 1", n)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("10")-usdc("0.1") {
		t.Errorf("balance %+v, want the call paid once", b)
	}
}
