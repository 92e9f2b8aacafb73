package e2e_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

func TestCreatorEarningsAndExecutions(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.5")
	for i := range 3 {
		m.ran(t, m.liveKey, agent)
		if i == 1 {
			m.clock.Advance(24 * time.Hour)
		}
	}
	if _, err := m.key.Execute(ctx, agent, run("devnet"), client.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	m.creatorC = m.signIn(m.creatorW) // a day later, the first session has expired
	e, err := m.creatorC.CreatorEarnings(ctx, crtx.Mainnet)
	if err != nil {
		t.Fatal(err)
	}
	// 0.5 less 1%: 0.495 a call.
	if e.Total != usdc("1.485") || e.Executions != 3 || len(e.Days) != 2 || e.Days[0].Executions != 2 || e.Days[1].Earned != usdc("0.495") {
		t.Errorf("mainnet earnings = %+v", e)
	}
	if e, _ := m.creatorC.CreatorEarnings(ctx, crtx.Devnet); e.Total != usdc("0.495") || e.Executions != 1 {
		t.Errorf("devnet earnings = %+v", e)
	}
	page, err := m.creatorC.CreatorExecutions(ctx, url.Values{"environment": {"mainnet"}})
	if err != nil || page.Total != 3 {
		t.Fatalf("creator executions = %+v, %v", page, err)
	}
	var raw map[string]any
	m.creatorC.Do(ctx, "GET", "/v1/creator/executions", "", nil, &raw)
	if strings.Contains(mustJSON(raw), m.callerW.address) {
		t.Error("the creator's view shows the caller's wallet")
	}
	// Another creator sees none of it; the caller's key cannot use it.
	_, other := m.creatorOf("0")
	if p, _ := other.CreatorExecutions(ctx, nil); p.Total != 0 {
		t.Errorf("another creator sees %d", p.Total)
	}
	_, err = m.liveKey.CreatorEarnings(ctx, crtx.Mainnet)
	wantCode(t, err, 401, "invalid_session")
	wantCode(t, m.creatorC.Do(ctx, "GET", "/v1/creator/earnings?environment=moon", "", nil, nil), 400, "invalid_request")
}
