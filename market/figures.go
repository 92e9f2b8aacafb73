package market

import (
	"context"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// dispatchBounds are the upper bounds, in seconds, in which dispatch times
// are counted: from a creator on the same network to the longest timeout a
// listing may set.
func dispatchBounds() []float64 {
	return []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
}

// Ended is the key of an ending's count: the execution's environment,
// final status and, for one that failed, its error code.
type Ended struct {
	Environment crtx.Environment
	Status      crtx.ExecStatus
	Code        string
}

// Dispatches is a histogram of the time calls to creators took, in one
// environment: Counts[i] the calls that took at most Bounds[i] seconds
// (cumulative), Count all of them and Seconds their sum.
type Dispatches struct {
	Bounds  []float64
	Counts  []uint64
	Count   uint64
	Seconds float64
}

// Figures are what this process counted since it started, for metrics:
// the executions it ended and the time its calls to creators took. Each
// replica counts its own; a dashboard sums them.
type Figures struct {
	Ended      map[Ended]uint64
	Dispatches map[crtx.Environment]Dispatches
}

// tally keeps the Figures.
type tally struct {
	mu         sync.Mutex
	ended      map[Ended]uint64
	dispatches map[crtx.Environment]*Dispatches
}

func (t *tally) end(e crtx.Execution) {
	k := Ended{Environment: e.Environment, Status: e.Status}
	if e.Status == crtx.ExecFailed {
		k.Code = e.ErrorCode
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended == nil {
		t.ended = map[Ended]uint64{}
	}
	t.ended[k]++
}

func (t *tally) dispatched(env crtx.Environment, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dispatches == nil {
		t.dispatches = map[crtx.Environment]*Dispatches{}
	}
	h := t.dispatches[env]
	if h == nil {
		b := dispatchBounds()
		h = &Dispatches{Bounds: b, Counts: make([]uint64, len(b))}
		t.dispatches[env] = h
	}
	s := d.Seconds()
	for i, le := range h.Bounds {
		if s <= le {
			h.Counts[i]++
		}
	}
	h.Count++
	h.Seconds += s
}

// Figures returns what this process counted so far.
func (m *Market) Figures() Figures {
	t := m.tally
	t.mu.Lock()
	defer t.mu.Unlock()
	f := Figures{Ended: make(map[Ended]uint64, len(t.ended)), Dispatches: make(map[crtx.Environment]Dispatches, len(t.dispatches))}
	for k, n := range t.ended {
		f.Ended[k] = n
	}
	for env, h := range t.dispatches {
		f.Dispatches[env] = Dispatches{Bounds: h.Bounds, Counts: append([]uint64(nil), h.Counts...), Count: h.Count, Seconds: h.Seconds}
	}
	return f
}

// Backlog reads the work waiting across the marketplace, every replica's:
// executions in flight and what they hold in escrow, deliveries and
// withdrawals waiting and the oldest of each.
func (m *Market) Backlog(ctx context.Context) (crtx.Backlog, error) {
	return crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Backlog, error) {
		return tx.System.Backlog(ctx, m.now().Add(-crtx.WebhookWindow))
	})
}
