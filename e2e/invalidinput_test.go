package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// A creator's failed reply may say the caller's input was at fault
// (error_code "invalid_input"): the caller gets a 400 invalid_input and
// its money back, and the agent's statistics count the call apart, in
// its executions but not against its success rate, as its page says.
func TestInvalidInputIsNotTheAgentFailing(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Task == "bad" {
			return "", 0, creator.InvalidInput("the task must name a file")
		}
		return "ok", 0, nil
	}), "0.01")
	before := m.balance(m.callerW, crtx.Mainnet)
	m.ran(t, m.liveKey, agent)
	_, err := m.liveKey.Execute(ctx, agent, run("bad"), client.ExecuteOptions{})
	e := wantCode(t, err, 400, "invalid_input")
	if e != nil && !strings.Contains(e.Message, "the agent refused the input: the task must name a file") {
		t.Errorf("the refusal says %q", e.Message)
	}
	if got, want := m.balance(m.callerW, crtx.Mainnet).Available, before.Available-usdc("0.01"); got != want {
		t.Errorf("after a refused input the caller holds %s, want %s: the refused call is refunded", got, want)
	}
	m.rollup()
	a, err := m.anon.Agent(ctx, agent, crtx.Mainnet)
	if err != nil || a.TotalExecutions != 2 || a.SuccessRate != 1 || a.InvalidInputCount != 1 {
		t.Errorf("statistics = %d executions, rate %v, %d refused inputs (%v); want 2, 1, 1", a.TotalExecutions, a.SuccessRate, a.InvalidInputCount, err)
	}
	resp, err := http.Get(m.d.URL + "/agents/" + agent)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "1 refused as invalid input, not counted as failures") {
		t.Error("the agent's page does not show refused inputs apart")
	}
	if !strings.Contains(string(page), "<b>1</b> run, <b>100%</b> completed") {
		t.Error("the agent's chart of runs counts a refused input as a failure")
	}
}
