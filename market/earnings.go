package market

import (
	"context"

	"github.com/crtx-market/crtx"
)

// CreatorEarnings totals a creator's settled earnings in env, per UTC day.
func (m *Market) CreatorEarnings(ctx context.Context, creator string, env crtx.Environment) (crtx.Earnings, error) {
	out := crtx.Earnings{Environment: env}
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		out.Days, err = tx.CreatorEarnings(ctx, creator, env)
		return err
	})
	for _, d := range out.Days {
		out.Total += d.Earned
		out.Executions += d.Executions
	}
	return out, internal("earnings", err)
}
