package market

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
)

// rollupBatch bounds one roll-up transaction, so a backlog is posted in
// short transactions.
const rollupBatch = 2000

// Rollup posts, in one transaction, what up to rollupBatch of the
// environment's ended executions left for later (LedgerTx.RolledUp): the
// credits of their ExecutionRecords to creators' wallets and the treasury,
// and their agents' statistics. An execution's own transaction then writes
// no row that another execution of the same agent, creator or platform
// also writes; the roll-up writes each such row once for the whole batch.
// It reports how many transactions it posted, and busy when another
// roll-up of env (another replica's, or this one's own loop) held the lock,
// so that it posted nothing whatever is pending.
func (m *Ledger) Rollup(ctx context.Context, env crtx.Environment) (n int, busy bool, err error) {
	err = m.store.UpdateGuarded(ctx, func(tx crtx.Tx) error {
		// One roll-up at a time per environment, across replicas.
		ok, err := tx.System.TryLock(ctx, "crtx-rollup-"+string(env))
		if err != nil || !ok {
			busy = err == nil
			return err
		}
		txs, err := tx.Ledger.Unposted(ctx, env, rollupBatch)
		if err != nil || len(txs) == 0 {
			return err
		}
		seqs := make([]int64, len(txs))
		var credits []crtx.Credit
		stats := map[string]crtx.AgentStats{}
		for i, t := range txs {
			seqs[i] = t.Seq
			credits = append(credits, t.DeferredCredits()...)
			if t.Data["by_creator"] == "true" {
				continue // the creator's own call says nothing of the agent to others
			}
			s := stats[t.Data["agent_id"]]
			s.Total++
			// A caller's cancellation, before dispatch, says nothing of the
			// agent: it is not a finished execution, so not a failure.
			// Nor does input the agent refused say it failed: that is
			// counted apart.
			switch t.Data["error_code"] {
			case crtx.CodeCancelled:
			case crtx.CodeInvalidInput:
				s.Rejected++
			default:
				s.Finished++
			}
			if t.Kind == crtx.TxExecutionRecord {
				s.Successful++
				ms, _ := strconv.ParseInt(t.Data["execution_time_ms"], 10, 64)
				s.TimeSumMS += ms
			}
			stats[t.Data["agent_id"]] = s
		}
		// In one order, so concurrent writers of these rows lock them alike.
		slices.SortFunc(credits, func(a, b crtx.Credit) int {
			return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Seq, b.Seq))
		})
		if err := tx.Ledger.PostCredits(ctx, env, seqs, credits); err != nil {
			return err
		}
		for _, agent := range slices.Sorted(maps.Keys(stats)) {
			if err := tx.Catalog.AddAgentStats(ctx, agent, env, stats[agent]); err != nil {
				return err
			}
		}
		n = len(txs)
		return nil
	})
	return n, busy, internal("rollup", err)
}

// RollupAll posts everything unposted in both environments, batch after
// batch: what RunRollup does each interval, and what a test or an offline
// command calls to see the balances and statistics with nothing pending.
func (m *Ledger) RollupAll(ctx context.Context) error {
	for _, env := range crtx.Environments {
		for {
			n, busy, err := m.Rollup(ctx, env)
			if err != nil {
				return err
			}
			if busy {
				// Another roll-up is posting: nothing pending may be
				// called posted until it is done, so wait for it.
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
			if n < rollupBatch {
				break
			}
		}
	}
	return nil
}

// RunRollup posts every interval until ctx ends. The interval is the lag
// of creators' and the treasury's balances and of agents' statistics
// behind the executions that end (docs/ledger.md).
func (m *Ledger) RunRollup(ctx context.Context, interval time.Duration) {
	every(ctx, interval, false, func(ctx context.Context) {
		if err := m.RollupAll(ctx); err != nil && ctx.Err() == nil {
			m.cfg.Logger.Error("rollup", "err", err)
		}
	})
}
