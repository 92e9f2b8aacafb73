package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// Forty executions at once, sync and async, from a wallet that can pay for
// ten: exactly ten are accepted and the wallet ends at zero.
func TestNoDoubleSpend(t *testing.T) {
	m := newMarket(t, "0")
	if _, err := m.anon.Airdrop(ctx, m.callerW.address, usdc("1")); err != nil {
		t.Fatal(err)
	}
	agent := m.list(newService(t, slow(20*time.Millisecond)), "0.1")
	var mu sync.Mutex
	accepted, refused := []string{}, 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			rec, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: fmt.Sprint(i), Async: i%2 == 0}, client.ExecuteOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch client.Code(err) {
			case "":
				accepted = append(accepted, rec.ExecutionID)
			case "insufficient_balance":
				refused++
			default:
				t.Errorf("execute %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(accepted) != 10 || refused != 30 {
		t.Fatalf("accepted %d, refused %d", len(accepted), refused)
	}
	for _, id := range accepted {
		if rec, err := m.key.Wait(bounded(t), id, 10*time.Millisecond); err != nil || rec.Status != "completed" {
			t.Errorf("%s: %+v, %v", id, rec.Status, err)
		}
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != 0 || b.Escrowed != 0 {
		t.Errorf("wallet ends at %+v", b)
	}
}

func ptr[T any](v T) *T { return &v }

func TestExecuteChecks(t *testing.T) {
	m := newMarket(t, "1")
	svc := newService(t, echo)
	agent := m.list(svc, "0.4", map[string]any{"input_schema": json.RawMessage(
		`{"type":"object","properties":{"lang":{"type":"string","enum":["en","de"]},"n":{"type":"integer"}},"required":["lang"]}`)})
	good := crtx.ExecuteParams{Task: "x", Parameters: json.RawMessage(`{"lang":"en"}`)}

	t.Run("credentials", func(t *testing.T) {
		_, err := m.anon.Execute(ctx, agent, good, client.ExecuteOptions{})
		wantCode(t, err, 401, "authentication_required")
		_, err = m.callerC.Execute(ctx, agent, good, client.ExecuteOptions{})
		wantCode(t, err, 401, "invalid_api_key")
	})
	t.Run("body", func(t *testing.T) {
		for _, p := range []crtx.ExecuteParams{{Task: ""}, {Task: strings.Repeat("t", 32<<10+1)},
			{Task: "x", Parameters: json.RawMessage(`{"lang":"fr"}`)}, {Task: "x", Parameters: json.RawMessage(`{}`)},
			{Task: "x", Parameters: json.RawMessage(`{"lang":"en","n":"two"}`)}, {Task: "x", Parameters: json.RawMessage(`[1]`)}} {
			_, err := m.key.Execute(ctx, agent, p, client.ExecuteOptions{})
			ce := wantCode(t, err, 400, "invalid_request")
			if ce.ExecutionID != nil {
				t.Errorf("a refused body names execution %s", *ce.ExecutionID)
			}
		}
		_, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "x", Parameters: json.RawMessage(`{"lang":"en","n":"two"}`)}, client.ExecuteOptions{})
		if ce := wantCode(t, err, 400, "invalid_request"); ce.Message != "parameters.n: must be a whole number" {
			t.Errorf("message %q does not name the parameter in words", ce.Message)
		}
		// Each parameter at fault, at once, in error.fields.
		_, err = m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "x", Parameters: json.RawMessage(`{"lang":"fr","n":"two"}`)}, client.ExecuteOptions{})
		if ce := wantCode(t, err, 400, "invalid_request"); !strings.Contains(ce.Message, "parameters.lang: one of en, de") ||
			!strings.Contains(ce.Message, "parameters.n: must be a whole number") || len(ce.Fields) != 2 {
			t.Errorf("two parameters at fault: %q, fields %+v", ce.Message, ce.Fields)
		}
		bad := 61
		_, err = m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "x", Parameters: good.Parameters, TimeoutSeconds: &bad}, client.ExecuteOptions{})
		wantCode(t, err, 400, "invalid_request")
		err = m.key.Do(ctx, "POST", "/v1/agents/"+agent+"/execute", "application/json", []byte(`{"task":"x","extra":1}`), nil)
		wantCode(t, err, 400, "invalid_request")
		err = m.key.Do(ctx, "POST", "/v1/agents/"+agent+"/execute", "text/plain", []byte(`{"task":"x"}`), nil)
		wantCode(t, err, 415, "unsupported_media_type")
		err = m.key.Do(ctx, "POST", "/v1/agents/"+agent+"/execute", "application/json", []byte(`{"task":"`+strings.Repeat("a", 513<<10)+`"}`), nil)
		wantCode(t, err, 413, "request_too_large")
	})
	t.Run("unknown agent", func(t *testing.T) {
		_, err := m.key.Execute(ctx, "agt_nope", good, client.ExecuteOptions{})
		wantCode(t, err, 404, "agent_not_found")
	})
	t.Run("price guard", func(t *testing.T) {
		low := usdc("0.39")
		_, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "x", Parameters: good.Parameters, MaxCost: &low}, client.ExecuteOptions{})
		wantCode(t, err, 409, "price_changed")
		exact := usdc("0.4")
		if _, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "x", Parameters: good.Parameters, MaxCost: &exact}, client.ExecuteOptions{}); err != nil {
			t.Errorf("max_cost equal to the price: %v", err)
		}
	})
	t.Run("balance", func(t *testing.T) {
		// 0.6 left; the second costs 0.4 more than the 0.2 that remain.
		if _, err := m.key.Execute(ctx, agent, good, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := m.key.Execute(ctx, agent, good, client.ExecuteOptions{})
		ce := wantCode(t, err, 402, "insufficient_balance")
		// It says how the 0.2 missing enters devnet, which has no chain here.
		if !strings.Contains(ce.Message, "0.2 USDC available") || !strings.Contains(ce.Message, "needs 0.4 USDC") ||
			!strings.Contains(ce.Message, "add the 0.2 USDC missing with the devnet airdrop (crtx airdrop 0.2") {
			t.Errorf("402 message = %q", ce.Message)
		}
	})
	t.Run("paused", func(t *testing.T) {
		patch(m.creatorC, agent, map[string]any{"status": "paused"})
		_, err := m.key.Execute(ctx, agent, good, client.ExecuteOptions{})
		wantCode(t, err, 422, "agent_paused")
		patch(m.creatorC, agent, map[string]any{"status": "active"})
	})
	t.Run("spend limit", func(t *testing.T) {
		limit := usdc("0.5")
		k, _ := m.callerC.CreateKey(ctx, client.KeyParams{Name: "limited", Environment: crtx.Mainnet, SpendLimit: &limit})
		lk := m.anon.WithToken(k.Key)
		if _, err := lk.Execute(ctx, agent, good, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
		before := m.balance(m.callerW, crtx.Mainnet)
		_, err := lk.Execute(ctx, agent, good, client.ExecuteOptions{})
		ce := wantCode(t, err, 402, "spend_limit_exceeded")
		if !strings.Contains(ce.Message, "spent 0.4 of its 0.5 USDC limit") || !strings.Contains(ce.Message, "costs 0.4") {
			t.Errorf("402 message = %q", ce.Message)
		}
		if m.balance(m.callerW, crtx.Mainnet) != before {
			t.Error("a refused execution moved money")
		}
		keys, _ := m.callerC.Keys(ctx)
		for _, kk := range keys {
			if kk.ID == k.ID && (kk.ExecutionCount != 1 || kk.TotalSpent != usdc("0.4")) {
				t.Errorf("limited key counters = %+v", kk)
			}
		}
	})
	t.Run("key revoked by another replica", func(t *testing.T) {
		k, _ := m.callerC.CreateKey(ctx, client.KeyParams{Name: "elsewhere", Environment: crtx.Mainnet})
		rk := m.anon.WithToken(k.Key)
		if _, err := rk.Execute(ctx, agent, good, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Revoked in the database, as another replica does: this one still
		// keeps the key for its checks before the charge.
		err := m.d.Store.Update(ctx, func(tx crtx.Tx) error { return tx.Access.RevokeKey(ctx, k.ID, time.Now()) })
		if err != nil {
			t.Fatal(err)
		}
		before := m.balance(m.callerW, crtx.Mainnet)
		_, err = rk.Execute(ctx, agent, good, client.ExecuteOptions{})
		wantCode(t, err, 401, "invalid_api_key")
		if m.balance(m.callerW, crtx.Mainnet) != before {
			t.Error("an execution with a revoked key moved money")
		}
	})
	t.Run("price changed by another replica", func(t *testing.T) {
		// Raised by 0.1 in the database, as another replica does: this one
		// still keeps the old price for its checks before the charge.
		raise := func() {
			t.Helper()
			err := m.d.Store.Update(ctx, func(tx crtx.Tx) error {
				a, err := tx.Catalog.Agent(ctx, agent)
				if err != nil {
					return err
				}
				a.Price += crtx.MicroPerUSDC / 10
				return tx.Catalog.UpdateAgent(ctx, a)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.admin.Deposit(ctx, crtx.Devnet, m.callerW.address, usdc("2")); err != nil {
			t.Fatal(err)
		}
		if _, err := m.key.Execute(ctx, agent, good, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
		raise()
		before := m.balance(m.callerW, crtx.Devnet)
		rec, err := m.key.Execute(ctx, agent, good, client.ExecuteOptions{})
		if err != nil || rec.Cost != usdc("0.5") {
			t.Fatalf("after the raise: cost %v, %v; want the new price, 0.5", rec.Cost, err)
		}
		if got := m.balance(m.callerW, crtx.Devnet); before.Available-got.Available != usdc("0.5") {
			t.Errorf("charged %s, want the new price", before.Available-got.Available)
		}
		raise()
		before = m.balance(m.callerW, crtx.Devnet)
		limit := usdc("0.5")
		_, err = m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: good.Task, Parameters: good.Parameters, MaxCost: &limit}, client.ExecuteOptions{})
		wantCode(t, err, 409, "price_changed")
		if m.balance(m.callerW, crtx.Devnet) != before {
			t.Error("a refused execution moved money")
		}
	})
	t.Run("delisted", func(t *testing.T) {
		m.creatorC.Delist(ctx, agent)
		_, err := m.key.Execute(ctx, agent, good, client.ExecuteOptions{})
		wantCode(t, err, 404, "agent_not_found")
	})
}
