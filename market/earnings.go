package market

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

// CreatorEarnings totals a creator's settled earnings in env, per UTC day.
func (m *Funds) CreatorEarnings(ctx context.Context, creator string, env crtx.Environment) (crtx.Earnings, error) {
	out := crtx.Earnings{Environment: env}
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		out.Days, err = tx.Executions.CreatorEarnings(ctx, creator, env)
		return err
	})
	for _, d := range out.Days {
		out.Total += d.Earned
		out.Executions += d.Executions
	}
	return out, internal("earnings", err)
}

// Spending is what wallet spent in env over the last days UTC days, today
// included, per day and agent.
func (m *Funds) Spending(ctx context.Context, wallet string, env crtx.Environment, days int) ([]crtx.DaySpend, error) {
	today := m.now().UTC().Truncate(24 * time.Hour)
	out, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.DaySpend, error) {
		return tx.Executions.WalletSpending(ctx, wallet, env, today.AddDate(0, 0, 1-days))
	})
	return out, internal("spending", err)
}

// EarningsByAgent is a creator's settled earnings in env, by agent.
func (m *Funds) EarningsByAgent(ctx context.Context, creator string, env crtx.Environment) (map[string]crtx.USDC, error) {
	out, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (map[string]crtx.USDC, error) {
		return tx.Executions.CreatorEarningsByAgent(ctx, creator, env)
	})
	return out, internal("earnings by agent", err)
}

// AgentRuns are an agent's public runs in env over the last 30 UTC days,
// per day, counted at most once a minute: an agent's page shows them, and
// a busy agent's month is many rows to count.
func (m *Catalog) AgentRuns(ctx context.Context, agentID string, env crtx.Environment) ([]crtx.DayRuns, error) {
	ctx = context.WithoutCancel(ctx) // shared by the requests that wait for it
	out, err := m.runs.fetch(agentID+"|"+string(env), time.Now(), func() ([]crtx.DayRuns, error) {
		since := m.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -29)
		return crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.DayRuns, error) {
			return tx.Executions.AgentRuns(ctx, agentID, env, since)
		})
	})
	return out, internal("agent runs", err)
}
