package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
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
