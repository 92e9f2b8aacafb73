package market_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
)

// The percentiles of an agent card (package a2a): nearest rank over the
// latest 1000 completed mainnet executions of the agent, nothing else.
func TestA2ALatencyPercentiles(t *testing.T) {
	ctx := context.Background()
	m, store := newMarketOn(t)
	creator := address(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	agent := func(id string) crtx.Agent {
		return crtx.Agent{ID: id, Creator: creator, Name: id, Tags: []string{}, InputSchema: json.RawMessage(`{}`),
			OutputSchema: json.RawMessage(`{}`), PricingModel: "pay_per_use", Price: 1000, EndpointURL: "https://example.com/x",
			SigningPublicKey: creator, TimeoutSeconds: 30, Status: crtx.AgentActive, CreatedAt: now, UpdatedAt: now}
	}
	n := 0
	exec := func(agentID string, env crtx.Environment, status crtx.ExecStatus, ms int64, at time.Time) crtx.Execution {
		n++
		return crtx.Execution{ID: crtx.NewUUID(), Environment: env, Wallet: address(t), KeyID: "k", AgentID: agentID,
			AgentName: agentID, Creator: creator, EndpointURL: "https://example.com/x", SigningPublicKey: creator, Task: "t",
			Parameters: json.RawMessage(`{}`), TimeoutSeconds: 30, Cost: 1000, Held: 1000, Base: 1000, CreatorAmount: 990, PlatformAmount: 10,
			Status: status, ExecutionTimeMS: &ms, InitiatedAt: at, Deadline: at.Add(time.Minute), LeaseUntil: at}
	}
	err := store.Update(ctx, func(tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, creator, now); err != nil {
			return err
		}
		for _, id := range []string{"a", "other", "new"} {
			if err := tx.Catalog.InsertAgent(ctx, agent(id)); err != nil {
				return err
			}
		}
		var rows []crtx.Execution
		// The latest 1000: 1 ms to 1000 ms, shuffled in time.
		for i := range 1000 {
			ms := int64((i*379)%1000 + 1)
			rows = append(rows, exec("a", crtx.Mainnet, crtx.ExecCompleted, ms, now.Add(-time.Duration(i)*time.Second)))
		}
		// Older than the latest 1000, and slow: not counted.
		for i := range 5 {
			rows = append(rows, exec("a", crtx.Mainnet, crtx.ExecCompleted, 1_000_000, now.Add(-time.Hour-time.Duration(i)*time.Second)))
		}
		// Recent but no sample: failed, disputed, devnet, another agent.
		rows = append(rows,
			exec("a", crtx.Mainnet, crtx.ExecFailed, 9_000_000, now.Add(time.Second)),
			exec("a", crtx.Mainnet, crtx.ExecDisputed, 9_000_000, now.Add(time.Second)),
			exec("a", crtx.Devnet, crtx.ExecCompleted, 9_000_000, now.Add(time.Second)),
			exec("other", crtx.Mainnet, crtx.ExecCompleted, 9_000_000, now.Add(time.Second)))
		for _, e := range rows {
			if err := tx.Executions.InsertExecution(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Catalog.Latency(ctx, creator, "a")
	if err != nil || got != (market.Latency{Samples: 1000, P50MS: 500, P95MS: 950}) {
		t.Errorf("latency of a = %+v, %v; want 1000 samples, p50 500, p95 950", got, err)
	}
	if got, err := m.Catalog.Latency(ctx, creator, "new"); err != nil || got.Samples != 0 || got.P50MS != 0 || got.P95MS != 0 {
		t.Errorf("latency without executions = %+v, %v", got, err)
	}
	if got, err := m.Catalog.Latency(ctx, address(t), "a"); err != nil || got.Samples != 0 {
		t.Errorf("latency read under another creator = %+v, %v", got, err)
	}
}
