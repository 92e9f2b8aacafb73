package market

import (
	"context"
	"slices"

	"github.com/crtx-market/crtx"
)

// LatencySamples is how many of an agent's latest executions its latency
// percentiles are taken over: enough to be stable, few enough that one
// read answers, and recent enough to follow a creator's changes.
const LatencySamples = 1000

// Latency is how long an agent takes to complete a call on mainnet: the
// 50th and 95th percentiles of execution_time_ms (from dispatch to the
// creator's answer, as every record reports it) over the agent's latest
// LatencySamples completed mainnet executions, by initiated_at. A
// percentile is the nearest rank: the smallest time that at least that
// share of the samples did not exceed. Failed, cancelled and disputed
// executions are not samples: a failure's time says nothing of how long
// the work takes, and devnet is for trying an agent, not for measuring it.
// Nor are the creator's calls to its own agent, which it pays itself.
type Latency struct {
	// Samples is how many executions were measured; with none, both
	// percentiles are zero and mean "unknown", not "instant".
	Samples int
	P50MS   int64
	P95MS   int64
}

// Latency measures an agent's completion times in one store read. creator
// is the agent's creator: the executions are read by the creator's index.
func (m *Catalog) Latency(ctx context.Context, creator, agentID string) (Latency, error) {
	list, _, err := m.market.Executions.Executions(ctx, crtx.ExecutionQuery{Creator: creator, AgentID: agentID, Environment: crtx.Mainnet,
		Status: crtx.ExecCompleted, NotByCreator: true, Limit: LatencySamples})
	if err != nil {
		return Latency{}, err
	}
	ms := make([]int64, 0, len(list))
	for _, e := range list {
		if e.ExecutionTimeMS != nil {
			ms = append(ms, *e.ExecutionTimeMS)
		}
	}
	slices.Sort(ms)
	return Latency{Samples: len(ms), P50MS: nearestRank(ms, 50), P95MS: nearestRank(ms, 95)}, nil
}

// nearestRank is the p-th percentile of sorted by the nearest-rank method:
// the value at rank ⌈p/100 × n⌉, counting from 1. It is always one of the
// samples, never an interpolation between two.
func nearestRank(sorted []int64, p int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100 // ⌈p·n/100⌉ in integers
	return sorted[max(rank, 1)-1]
}
