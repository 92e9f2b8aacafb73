package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

func slow(d time.Duration) creator.Func {
	return func(ctx context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			time.Sleep(d)
		}
		return "slow " + r.Task, 0, nil
	}
}

func TestExecuteAsync(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(300*time.Millisecond)), "0.5")
	req, _ := http.NewRequest("POST", m.d.URL+"/v1/agents/"+agent+"/execute", strings.NewReader(`{"task":"later","async":true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+m.key.Token())
	resp, err := m.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var acc api.Accepted
	json.NewDecoder(resp.Body).Decode(&acc)
	resp.Body.Close()
	if resp.StatusCode != 202 || acc.Status != "pending" || resp.Header.Get("Location") != "/v1/executions/"+acc.ExecutionID {
		t.Fatalf("async answer: %d %+v %s", resp.StatusCode, acc, resp.Header.Get("Location"))
	}
	// While in progress: money in escrow, unknown fields null but present.
	var raw map[string]any
	if err := m.key.Do(ctx, "GET", "/v1/executions/"+acc.ExecutionID, "", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["status"] != "pending" && raw["status"] != "running" {
		t.Errorf("status while in progress = %v", raw["status"])
	}
	for _, f := range []string{"result", "result_hash", "completed_at", "ipfs_url", "tokens_used", "execution_time_ms", "error", "dispute"} {
		if v, ok := raw[f]; !ok || v != nil {
			t.Errorf("%s while in progress = %v (present %v), want null", f, v, ok)
		}
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != usdc("0.5") || b.Available != usdc("9.5") {
		t.Errorf("balance while in progress = %+v", b)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rec, err := m.key.Wait(wctx, acc.ExecutionID, 20*time.Millisecond)
	if err != nil || rec.Status != "completed" || *rec.Result != "slow later" {
		t.Fatalf("final = %+v, %v", rec, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("9.5") {
		t.Errorf("balance after = %+v", b)
	}
}

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
		if ce := wantCode(t, err, 400, "invalid_request"); !strings.Contains(ce.Message, "/n") {
			t.Errorf("message %q does not name the path", ce.Message)
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
		if !strings.Contains(ce.Message, "0.2 USDC available") || !strings.Contains(ce.Message, "needs 0.4 USDC") {
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
		err := m.d.Store.Update(ctx, func(tx crtx.Tx) error { return tx.RevokeKey(ctx, k.ID, time.Now()) })
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
				a, err := tx.Agent(ctx, agent)
				if err != nil {
					return err
				}
				a.Price += crtx.MicroPerUSDC / 10
				return tx.UpdateAgent(ctx, a)
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

func TestExecutionIsolationAndLists(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.1")
	other := m.list(newService(t, echo), "0.1", map[string]any{"name": "Other"})
	var ids []string
	for i := range 5 {
		a := agent
		if i == 4 {
			a = other
		}
		rec, err := m.key.Execute(ctx, a, run(fmt.Sprint(i)), client.ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ExecutionID)
		m.clock.Advance(time.Minute)
	}
	live, err := m.liveKey.Execute(ctx, agent, run("live"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.liveKey.Execution(ctx, ids[0])
	wantCode(t, err, 404, "execution_not_found")
	_, err = m.key.Execution(ctx, live.ExecutionID)
	wantCode(t, err, 404, "execution_not_found")
	mallory := m.signIn(newWallet(t))
	mk, _ := mallory.CreateKey(ctx, client.KeyParams{Name: "m", Environment: crtx.Devnet})
	_, err = m.anon.WithToken(mk.Key).Execution(ctx, ids[0])
	wantCode(t, err, 404, "execution_not_found")
	if page, _ := m.anon.WithToken(mk.Key).Executions(ctx, nil); page.Total != 0 {
		t.Errorf("a stranger lists %d executions", page.Total)
	}

	list := func(q url.Values) []string {
		page, err := m.key.Executions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range page.Executions {
			out = append(out, s.ExecutionID)
		}
		return out
	}
	if got := list(nil); joined(got) != joined([]string{ids[4], ids[3], ids[2], ids[1], ids[0]}) {
		t.Errorf("newest first: %v", got)
	}
	if got := list(url.Values{"agent_id": {other}}); joined(got) != ids[4] {
		t.Errorf("agent filter: %v", got)
	}
	if got := list(url.Values{"status": {"failed"}}); len(got) != 0 {
		t.Errorf("status filter: %v", got)
	}
	rec2, _ := m.key.Execution(ctx, ids[2])
	from := rec2.InitiatedAt.Format(time.RFC3339Nano)
	to := rec2.InitiatedAt.Add(2 * time.Minute).Format(time.RFC3339Nano)
	if got := list(url.Values{"from": {from}, "to": {to}}); joined(got) != joined([]string{ids[3], ids[2]}) {
		t.Errorf("from inclusive, to exclusive: %v", got)
	}
	if got := list(url.Values{"limit": {"2"}, "offset": {"1"}}); joined(got) != joined([]string{ids[3], ids[2]}) {
		t.Errorf("page: %v", got)
	}
	for _, q := range []string{"status=done", "limit=0", "from=yesterday", "offset=-1", "colour=red"} {
		wantCode(t, m.key.Do(ctx, "GET", "/v1/executions?"+q, "", nil, nil), 400, "invalid_request")
	}
	// The wallet's total counts every key of the environment, revoked ones
	// included: a second devnet key runs one execution and is revoked.
	k2, err := m.callerC.CreateKey(ctx, client.KeyParams{Name: "second", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.anon.WithToken(k2.Key).Execute(ctx, agent, run("second key"), client.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.callerC.RevokeKey(ctx, k2.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  *client.Client
		want int
	}{{m.key, 6}, {m.liveKey, 1}} {
		if page, err := c.key.Executions(ctx, nil); err != nil || page.Total != c.want || len(page.Executions) != c.want {
			t.Errorf("unfiltered list: total %d, %d listed (%v); want %d", page.Total, len(page.Executions), err, c.want)
		}
	}
}
