package market

import (
	"context"
	"sync"

	"github.com/crtx-market/crtx"
)

// slots are the process's dispatch slots (Config.MaxDispatches), shared so
// that no one starves the others: each environment is guaranteed a quarter
// of them, which the other may not take, and one creator (so one agent) or
// one wallet holds at most share of them in an environment. Executions that
// find no slot free to them wait in line, and are given one, in order,
// when one frees that they may hold.
type slots struct {
	max, reserve, share int

	mu   sync.Mutex
	used map[crtx.Environment]int
	held map[holder]int
	line []*waiter
}

// holder is a creator or a wallet in an environment.
type holder struct {
	env     crtx.Environment
	creator bool
	id      string
}

type waiter struct {
	e     crtx.Execution
	ready chan struct{} // closed when the slot is the waiter's
}

func newSlots(n int, share float64) *slots {
	return &slots{max: n, reserve: n / 4, share: max(1, int(share*float64(n))),
		used: map[crtx.Environment]int{}, held: map[holder]int{}}
}

func holders(e crtx.Execution) [2]holder {
	return [2]holder{{e.Environment, true, e.Creator}, {e.Environment, false, e.Wallet}}
}

// fits reports whether e may take a slot now: one is free that no other
// environment is guaranteed, and e's creator and wallet hold less than
// their share. s.mu is held.
func (s *slots) fits(e crtx.Execution) bool {
	taken := s.used[e.Environment]
	for _, env := range crtx.Environments {
		if env != e.Environment {
			taken += max(s.reserve, s.used[env])
		}
	}
	if taken >= s.max {
		return false
	}
	for _, h := range holders(e) {
		if s.held[h] >= s.share {
			return false
		}
	}
	return true
}

// hold counts a slot taken (n 1) or given back (n −1) by e. s.mu is held.
func (s *slots) hold(e crtx.Execution, n int) {
	s.used[e.Environment] += n
	for _, h := range holders(e) {
		if s.held[h] += n; s.held[h] <= 0 {
			delete(s.held, h)
		}
	}
}

// take takes a slot for e if one is free to it now; release gives it back.
func (s *slots) take(e crtx.Execution) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fits(e) {
		return nil, false
	}
	s.hold(e, 1)
	return s.releaser(e), true
}

// wait takes a slot for e, waiting in line until one is free to it, or
// returns ctx's error when ctx ends first.
func (s *slots) wait(ctx context.Context, e crtx.Execution) (release func(), err error) {
	// Tried and lined up under one lock, so no slot frees in between
	// unseen.
	s.mu.Lock()
	if s.fits(e) {
		s.hold(e, 1)
		s.mu.Unlock()
		return s.releaser(e), nil
	}
	w := &waiter{e: e, ready: make(chan struct{})}
	s.line = append(s.line, w)
	s.mu.Unlock()
	select {
	case <-w.ready:
		return s.releaser(e), nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.ready:
		// Given a slot as ctx ended: it goes to the next in line.
		s.free(e)
	default:
		for i, o := range s.line {
			if o == w {
				s.line = append(s.line[:i], s.line[i+1:]...)
				break
			}
		}
	}
	return nil, ctx.Err()
}

// releaser gives e's slot back, once.
func (s *slots) releaser(e crtx.Execution) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.free(e)
		})
	}
}

// free gives e's slot back and hands free slots to those in line that may
// take them, first come first served. s.mu is held.
func (s *slots) free(e crtx.Execution) {
	s.hold(e, -1)
	line := s.line[:0]
	for _, w := range s.line {
		if s.fits(w.e) {
			s.hold(w.e, 1)
			close(w.ready)
			continue
		}
		line = append(line, w)
	}
	clear(s.line[len(line):])
	s.line = line
}
