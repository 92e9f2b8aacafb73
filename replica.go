package crtx

import (
	"context"
	"time"
)

// A replica is one process on a store. It owns the executions it
// dispatches (Execution.Owner) and records a heartbeat every
// Config.Heartbeat; when a replica misses missedBeats of them, the others
// take its executions over at their next claim instead of waiting for each
// execution's lease to run out.
const missedBeats = 3

// Replica is this process's id among the replicas of its store.
func (m *Market) Replica() string { return m.replica }

// RunHeartbeat records that this replica is alive, at once and then every
// Config.Heartbeat, until ctx ends.
func (m *Market) RunHeartbeat(ctx context.Context) {
	t := time.NewTicker(m.cfg.Heartbeat)
	defer t.Stop()
	for {
		err := m.store.UpdateGuarded(ctx, func(tx Tx) error {
			now := m.now()
			return tx.Heartbeat(ctx, m.replica, now, now.Add(-time.Hour))
		})
		if err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("heartbeat", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// TakeOverAll claims every execution in flight, whatever its lease, and
// runs it: for a process that is its store's only one (a SQLite folder,
// which one crtxd serves), at start, so that what a crashed predecessor
// left in flight runs again at once.
func (m *Market) TakeOverAll(ctx context.Context) { m.claim(ctx, true) }
