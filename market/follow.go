package market

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

// A Follower waits for one execution's changes of state, for a stream:
// woken when the change is announced (see watches), with a read every
// Config.StreamRecheck besides, so that an announcement lost on its way
// from another replica delays a stream rather than hangs it.
type Follower struct {
	m *Executions
	w *watch
	e crtx.Execution // as last returned
	// due says a read is owed: one after the latest announcement that
	// started after the first after reads of the watch. One is owed too
	// when announcements were made since gen, the last read's.
	due        bool
	gen, after uint64
}

// Watch starts following e, an execution its caller has read under the
// principal it serves. Close the Follower when done.
func (m *Executions) Watch(e crtx.Execution) *Follower {
	w := m.watches.join(e.ID)
	// e was read before joining: a change announced in between went by
	// unheard, so the first read must start after the join.
	return &Follower{m: m, w: w, e: e, due: true, after: w.reads.Load()}
}

// Close stops following.
func (f *Follower) Close() { f.m.watches.leave(f.e.ID, f.w) }

// Next returns the execution once its state is no longer the one last
// returned (Watch's, at first), or as it is once it is final, with its
// result. When ctx ends first, Next returns ctx's error and the execution
// as last returned.
func (f *Follower) Next(ctx context.Context) (crtx.Execution, string, error) {
	for {
		changed, gen := f.m.watches.next(f.w)
		if f.due || gen != f.gen {
			e, result, err := f.w.read(ctx, gen, f.after, f.load)
			if err != nil {
				return f.e, "", err
			}
			f.due, f.gen = false, gen
			if e.Status != f.e.Status || e.Status.Final() {
				f.e = e
				return e, result, nil
			}
		}
		// A recheck takes any follower's read that starts from now on.
		f.after = f.w.reads.Load()
		t := time.NewTimer(f.m.cfg.StreamRecheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return f.e, "", ctx.Err()
		case <-changed:
			t.Stop()
		case <-t.C:
			f.due = true
		}
	}
}

// load reads the execution with its dispute and result.
func (f *Follower) load(ctx context.Context) (crtx.Execution, string, error) {
	var e crtx.Execution
	var result string
	err := f.m.store.View(ctx, func(tx crtx.Tx) (err error) {
		if e, err = tx.Executions.Execution(ctx, f.e.ID); err != nil {
			return err
		}
		result, err = details(ctx, tx, &e)
		return err
	})
	return e, result, internal("follow execution", err)
}

// Follow waits for e, an execution its caller has read under the
// principal it serves, until it is final, and returns it with its result.
// changed, if not nil, is told of each state e moves to, and ends the
// following early by answering false. When ctx ends first, Follow returns
// ctx's error and e as last read.
func (m *Executions) Follow(ctx context.Context, e crtx.Execution, changed func(e crtx.Execution, result string) bool) (crtx.Execution, string, error) {
	f := m.Watch(e)
	defer f.Close()
	for {
		next, result, err := f.Next(ctx)
		if err != nil {
			return next, "", err
		}
		moved := next.Status != e.Status
		e = next
		if moved && changed != nil && !changed(e, result) {
			return e, result, nil
		}
		if e.Status.Final() {
			return e, result, nil
		}
	}
}

// announce tells the streams following execution id, in this process and
// in the other replicas, that its state changed: call it once the change
// is committed.
func (m *core) announce(id string) {
	m.watches.announce(id)
	if m.outbox == nil {
		return
	}
	select {
	case m.outbox <- id:
	default:
		// The publisher is behind: the other replicas' streams see the
		// change at their next recheck.
	}
}
