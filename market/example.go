package market

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/crtx-market/crtx"
)

// Example is a real run of an agent that its page shows and fills its
// Try-it form with: the creator's own latest completed run whose result is
// published, so that nothing a caller asked is shown.
type Example struct {
	Task       string
	Parameters json.RawMessage
	Output     string
	// Environment is where it ran.
	Environment crtx.Environment
}

// AgentExample is agentID's example, looked for on mainnet then devnet
// among the creator's own latest runs; nil without one. It is read at most
// once a minute per agent.
func (m *Catalog) AgentExample(ctx context.Context, agentID, creator string) (*Example, error) {
	ctx = context.WithoutCancel(ctx) // shared by the requests that wait for it
	out, err := m.examples.fetch(agentID, time.Now(), func() (*Example, error) {
		for _, env := range []crtx.Environment{crtx.Mainnet, crtx.Devnet} {
			var ex *Example
			err := m.store.View(ctx, func(tx crtx.Tx) error {
				// The creator's own runs of the agent: a range of the
				// creator's executions, however busy the agent is.
				runs, _, err := tx.Executions.ListExecutions(ctx, crtx.ExecutionQuery{Wallet: creator, Environment: env, AgentID: agentID,
					Status: crtx.ExecCompleted, Limit: 5})
				if err != nil {
					return err
				}
				for _, e := range runs {
					if e.Private || e.ResultCID == "" {
						continue
					}
					out, err := tx.Executions.PublishedResult(ctx, e.ResultCID)
					if errors.Is(err, crtx.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					ex = &Example{Task: e.Task, Parameters: e.Parameters, Output: out, Environment: env}
					return nil
				}
				return nil
			})
			if err != nil || ex != nil {
				return ex, err
			}
		}
		return nil, nil
	})
	return out, internal("agent example", err)
}
