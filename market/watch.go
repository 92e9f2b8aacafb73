package market

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/crtx-market/crtx"
)

// watches are the executions that streams in this process follow. A
// change of an execution's state is announced to its watch (by the
// process that made it, or by another replica through the store's
// Notifier), which wakes every stream on it at once; the streams then
// share one read of the row instead of each reading it on a timer.
type watches struct {
	mu sync.Mutex
	by map[string]*watch
}

// watch is one execution's followers.
type watch struct {
	followers int           // under watches.mu
	changed   chan struct{} // closed, and replaced, by each announcement; under watches.mu
	gen       atomic.Uint64 // announcements so far

	reading chan struct{} // one slot: held by the follower that reads for all
	reads   atomic.Uint64 // reads started so far
	last    snapshot      // the latest read, under reading
}

// snapshot is an execution as read by the seq-th read, started after
// announcement gen.
type snapshot struct {
	seq, gen uint64
	e        crtx.Execution
	result   string
}

func (ws *watches) join(id string) *watch {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.by[id]
	if w == nil {
		w = &watch{changed: make(chan struct{}), reading: make(chan struct{}, 1)}
		ws.by[id] = w
	}
	w.followers++
	return w
}

func (ws *watches) leave(id string, w *watch) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.followers--; w.followers == 0 {
		delete(ws.by, id)
	}
}

// next is what a follower waits on for the next announcement, and the
// announcements made so far: a read after them is fresh until it closes.
func (ws *watches) next(w *watch) (<-chan struct{}, uint64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return w.changed, w.gen.Load()
}

// announce wakes the followers of the executions ids, if any.
func (ws *watches) announce(ids ...string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, id := range ids {
		if w := ws.by[id]; w != nil {
			w.wake()
		}
	}
}

// announceAll wakes every follower: for when announcements may have been
// missed (the connection that carries other replicas' was down).
func (ws *watches) announceAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.by {
		w.wake()
	}
}

func (w *watch) wake() {
	w.gen.Add(1)
	close(w.changed)
	w.changed = make(chan struct{})
}

// read returns the execution as read after announcement gen by a read
// that started after the first after reads: the last follower's read if it
// is that fresh, else a read made now with load, which the others share.
func (w *watch) read(ctx context.Context, gen, after uint64, load func(context.Context) (crtx.Execution, string, error)) (crtx.Execution, string, error) {
	select {
	case w.reading <- struct{}{}:
	case <-ctx.Done():
		return crtx.Execution{}, "", ctx.Err()
	}
	defer func() { <-w.reading }()
	if s := w.last; s.seq > after && s.gen >= gen {
		return s.e, s.result, nil
	}
	s := snapshot{seq: w.reads.Add(1), gen: w.gen.Load()}
	var err error
	if s.e, s.result, err = load(ctx); err != nil {
		return crtx.Execution{}, "", err
	}
	w.last = s
	return s.e, s.result, nil
}
