package e2e_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

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
