package e2e_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// A creator's calls to its own agent pay itself all but the fee: they
// leave the agent's public statistics — executions, success rate, the A2A
// card's latency — as they were, while another wallet's calls count.
func TestCreatorsOwnCallsAreNotStatistics(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Task == "fail" {
			return "", 0, errNotNow
		}
		return "ok", 0, nil
	}), "0.0001")
	k, err := m.creatorC.CreateKey(ctx, clientKey("own", crtx.Mainnet))
	if err != nil {
		t.Fatal(err)
	}
	runLogs.secret(k.Key, m.creatorW.address)
	own := m.anon.WithToken(k.Key)
	for range 3 {
		m.ran(t, own, agent)
	}
	m.ran(t, m.liveKey, agent)
	_, err = m.liveKey.Execute(ctx, agent, run("fail"), client.ExecuteOptions{})
	wantCode(t, err, 500, "execution_failed")
	m.rollup()

	a, err := m.anon.Agent(ctx, agent, crtx.Mainnet)
	if err != nil || a.TotalExecutions != 2 || a.SuccessfulExecutions != 1 || a.SuccessRate != 0.5 {
		t.Errorf("statistics = %d executions, %d successful, rate %v (%v); want 2, 1, 0.5: the creator's own 3 left out",
			a.TotalExecutions, a.SuccessfulExecutions, a.SuccessRate, err)
	}
	p := m.a2a(t, agent, "", a2a.TransportProtocolJSONRPC).card.Capabilities.Extensions[0].Params
	if p["executions"] != 2.0 || p["latency_samples"] != 1.0 {
		b, _ := json.Marshal(p)
		t.Errorf("A2A card pricing = %s; want 2 executions, 1 latency sample", b)
	}
}
