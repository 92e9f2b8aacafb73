package market

import (
	"context"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// A replica is one process on a store. It owns the executions it
// dispatches (Execution.Owner) and records a heartbeat every
// Config.Heartbeat. A replica whose heartbeat has not changed for
// missedBeats heartbeats, as another replica watches it on its own clock,
// is silent: the others take its executions over at their next claim
// instead of waiting for each execution's lease to run out. Watching the
// value change, rather than comparing it with the watcher's clock, keeps
// replicas whose clocks differ from taking each other's work.
const missedBeats = 3

// beats is what this replica saw of the others' heartbeats.
type beats struct {
	mu sync.Mutex
	// own is when this replica's last heartbeat committed; a replica
	// that cannot write its own judges no other, since the database, not
	// the others, may be what failed.
	own  time.Time
	seen map[string]seenBeat
}

type seenBeat struct {
	value time.Time // the heartbeat as the replica wrote it
	since time.Time // when this replica first saw that value, on its clock
}

// silent returns the replicas whose heartbeat has stood still for
// missedBeats heartbeats, given the latest values read at now.
func (b *beats) silent(values map[string]time.Time, now time.Time, heartbeat time.Duration) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := make(map[string]seenBeat, len(values))
	var out []string
	for id, v := range values {
		s, ok := b.seen[id]
		if !ok || !s.value.Equal(v) {
			s = seenBeat{value: v, since: now}
		}
		seen[id] = s
		if now.Sub(b.own) < 2*heartbeat && now.Sub(s.since) >= missedBeats*heartbeat {
			out = append(out, id)
		}
	}
	b.seen = seen
	return out
}

func (b *beats) beat(ok bool, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.own = now
		return
	}
	// Start watching afresh once this replica can write again: the others
	// could not either.
	b.own, b.seen = time.Time{}, nil
}

// RunHeartbeat records that this replica is alive, at once and then every
// Config.Heartbeat, until ctx ends.
func (m *Market) RunHeartbeat(ctx context.Context) {
	every(ctx, m.cfg.Heartbeat, true, func(ctx context.Context) {
		err := m.store.UpdateGuarded(ctx, func(tx crtx.Tx) error {
			now := m.now()
			return tx.System.Heartbeat(ctx, m.replica, crtx.Release, now, now.Add(-time.Hour))
		})
		m.beats.beat(err == nil, m.now())
		if err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("heartbeat", "err", err)
		}
	})
}

// TakeOverAll claims every execution in flight that another replica owns,
// whatever its lease, and runs it: for a process that is its store's only
// one (a SQLite folder, which one crtxd serves), at start, so that what a
// crashed predecessor left in flight runs again at once.
func (m *Market) TakeOverAll(ctx context.Context) { m.claim(ctx, true) }
