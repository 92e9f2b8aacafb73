package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

func TestIdempotency(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(300*time.Millisecond)), "1")
	o := client.ExecuteOptions{IdempotencyKey: "order-42"}

	// A second request while the first runs.
	first := make(chan api.ExecutionRecord)
	go func() {
		r, err := m.key.Execute(ctx, agent, run("once"), o)
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	time.Sleep(100 * time.Millisecond)
	_, err := m.key.Execute(ctx, agent, run("once"), o)
	wantCode(t, err, 409, "idempotency_in_progress")
	r1 := <-first

	r2, err := m.key.Execute(ctx, agent, run("once"), o)
	if err != nil || r2.ExecutionID != r1.ExecutionID || mustJSON(r2) != mustJSON(r1) {
		t.Errorf("replay = %+v, %v; want %+v", r2, err, r1)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9") {
		t.Errorf("charged twice: %s", b.Available)
	}
	_, err = m.key.Execute(ctx, agent, run("twice"), o)
	wantCode(t, err, 409, "idempotency_key_reused")
	// An async first answer is replayed as 202 with the same id.
	oa := client.ExecuteOptions{IdempotencyKey: "async-1"}
	a1, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "a", Async: true}, oa)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "a", Async: true}, oa)
	if err != nil || a2.ExecutionID != a1.ExecutionID || a2.Status != "pending" {
		t.Errorf("async replay = %+v, %v", a2, err)
	}
	m.key.Wait(bounded(t), a1.ExecutionID, 20*time.Millisecond)
	// A failed first answer is replayed too, as the same error.
	failing := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Test {
			return "ok", 0, nil
		}
		return "", 0, errNotNow
	}), "1", map[string]any{"name": "Failing"})
	of := client.ExecuteOptions{IdempotencyKey: "fails"}
	_, e1 := m.key.Execute(ctx, failing, run("x"), of)
	_, e2 := m.key.Execute(ctx, failing, run("x"), of)
	c1, c2 := wantCode(t, e1, 500, "execution_failed"), wantCode(t, e2, 500, "execution_failed")
	if *c1.ExecutionID != *c2.ExecutionID {
		t.Errorf("failed replay has another execution id")
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("8") {
		t.Errorf("balance = %s", b.Available)
	}
	long := strings.Repeat("k", 256)
	_, err = m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{IdempotencyKey: long})
	wantCode(t, err, 400, "invalid_request")

	// The first answer is given again whatever the agent's terms became:
	// a raised price does not turn the retry into price_changed.
	capped := crtx.ExecuteParams{Task: "capped", MaxCost: ptr(usdc("1"))}
	oc := client.ExecuteOptions{IdempotencyKey: "capped"}
	k1, err := m.key.Execute(ctx, agent, capped, oc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := patch(m.creatorC, agent, map[string]any{"price_per_call_usdc": json.Number("1.5")}); err != nil {
		t.Fatal(err)
	}
	k2, err := m.key.Execute(ctx, agent, capped, oc)
	if err != nil || k2.ExecutionID != k1.ExecutionID {
		t.Errorf("replay after a price rise = %+v, %v; want execution %s again", k2, err, k1.ExecutionID)
	}
	_, err = m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "capped too", MaxCost: ptr(usdc("1"))}, client.ExecuteOptions{IdempotencyKey: "capped-2"})
	wantCode(t, err, 409, "price_changed")
	// Past 24 hours a key is free again: the same request runs anew.
	before := m.balance(m.callerW, crtx.Devnet).Available
	m.clock.Advance(crtx.IdempotencyTTL + time.Minute)
	r3, err := m.key.Execute(ctx, agent, run("once"), o)
	if err != nil || r3.ExecutionID == r1.ExecutionID {
		t.Errorf("after 24 hours = %+v, %v; want a new execution", r3, err)
	}
	if got := m.balance(m.callerW, crtx.Devnet).Available; before-got != usdc("1.5") {
		t.Errorf("the new execution charged %s, want 1.5", before-got)
	}
	// A key is the wallet's in one environment: the same key and body with
	// a devnet API key after a mainnet one is another request.
	ob := client.ExecuteOptions{IdempotencyKey: "both"}
	live, err := m.liveKey.Execute(ctx, agent, run("both"), ob)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := m.key.Execute(ctx, agent, run("both"), ob)
	if err != nil || dev.ExecutionID == live.ExecutionID || dev.Environment != crtx.Devnet {
		t.Errorf("devnet after mainnet with one key = %s on %s, %v; want a devnet execution of its own", dev.ExecutionID, dev.Environment, err)
	}
	if again, err := m.liveKey.Execute(ctx, agent, run("both"), ob); err != nil || again.ExecutionID != live.ExecutionID {
		t.Errorf("mainnet replay = %s, %v; want %s", again.ExecutionID, err, live.ExecutionID)
	}
}

// REST, MCP and A2A keys share a wallet's key space in the store, each
// door under a prefix of its own: a REST Idempotency-Key written as
// another door's stored key is a REST key all the same, a request of its
// own, neither a replay of that door's call nor refused as reused.
func TestIdempotencyDoorsAreApart(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(0)), "0.25")

	msg := userMessage(a2a.NewTextPart("count"))
	msg.ID = "m-1"
	task, err := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC).send(msg, false)
	if err != nil {
		t.Fatal(err)
	}
	var ran runAnswer
	if text := call(t, mcpSession(t, m.env, m.key, nil), "run_agent", map[string]any{"agent_id": agent, "task": "count",
		"idempotency_key": "k-1"}, &ran); text != "" {
		t.Fatal(text)
	}
	for key, other := range map[string]string{"a2a:m-1": string(task.ID), "mcp:k-1": ran.ExecutionID} {
		r, err := m.key.Execute(ctx, agent, run("count"), client.ExecuteOptions{IdempotencyKey: key})
		if err != nil || r.ExecutionID == other {
			t.Errorf("REST Idempotency-Key %s: %+v, %v; want an execution of its own, not %s", key, r, err, other)
		}
		again, err := m.key.Execute(ctx, agent, run("count"), client.ExecuteOptions{IdempotencyKey: key})
		if err != nil || again.ExecutionID != r.ExecutionID {
			t.Errorf("REST Idempotency-Key %s again: %+v, %v; want %s replayed", key, again, err, r.ExecutionID)
		}
	}
}
