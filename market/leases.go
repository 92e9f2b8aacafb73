package market

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crtx-market/crtx"
)

// leases are the executions this process runs, or holds in line for a
// dispatch slot, by id. One goroutine renews all their leases together,
// every third of the lease, in one statement per few hundred (not one per
// execution: ten thousand waiting would be thousands of writes a second);
// it runs while the set is not empty. The set also keeps this process
// from running an execution twice: recovery claims any execution whose
// lease ran out, this replica's own too, when renewals stalled.
type leases struct {
	mu   sync.Mutex
	held map[string]*lease
	stop chan struct{} // ends the renewing goroutine; nil when none runs
}

// lease is one execution's hold.
type lease struct {
	cancel context.CancelFunc // ends the execution's wait or dispatch
	lost   atomic.Bool        // its row was not renewed: another replica's, or final
}

// hold adds the execution id to the set, with the cancel that ends its
// wait or dispatch when its lease is lost; false when this process holds
// it already.
func (m *core) hold(id string, cancel context.CancelFunc) (*lease, bool) {
	l := &m.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[id]; ok {
		return nil, false
	}
	if l.held == nil {
		l.held = map[string]*lease{}
	}
	h := &lease{cancel: cancel}
	l.held[id] = h
	if l.stop == nil {
		l.stop = make(chan struct{})
		go m.renewLeases(l.stop)
	}
	return h, true
}

// holds reports whether this process runs the execution id.
func (m *core) holds(id string) bool {
	l := &m.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[id]
	return ok
}

// letGo takes the execution id out of the set.
func (m *core) letGo(id string) {
	l := &m.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held, id)
	if len(l.held) == 0 && l.stop != nil {
		close(l.stop)
		l.stop = nil
	}
}

// renewLeases extends every held lease each third of the lease until stop.
// An execution whose row was not renewed is lost: its wait or dispatch
// ends, and its new owner (or no one, if it is final) finishes it.
func (m *core) renewLeases(stop <-chan struct{}) {
	t := time.NewTicker(m.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		l := &m.leases
		l.mu.Lock()
		held := make(map[string]*lease, len(l.held))
		ids := make([]string, 0, len(l.held))
		for id, h := range l.held {
			held[id] = h
			ids = append(ids, id)
		}
		l.mu.Unlock()
		ctx := context.Background()
		var renewed []string
		err := m.store.UpdateGuarded(ctx, func(tx crtx.Tx) (err error) {
			// A row another transaction holds (being closed) counts while
			// its lease outlasts the next tick, when it is tried again.
			now := m.now()
			renewed, err = tx.Executions.RenewLeases(ctx, m.replica, ids, now.Add(m.cfg.Lease/3), now.Add(m.cfg.Lease))
			return err
		})
		if err != nil {
			// Tried again at the next tick; the leases outlast two.
			select {
			case <-stop:
			default:
				m.cfg.Logger.Warn("renew leases", "executions", len(ids), "err", err)
			}
			continue
		}
		for _, id := range renewed {
			delete(held, id)
		}
		for _, h := range held {
			h.lost.Store(true)
			h.cancel()
		}
	}
}
