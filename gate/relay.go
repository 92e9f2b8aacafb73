package gate

import (
	"context"
	"sync"
)

// Relay carries a streamed call's pieces from the goroutine that runs the
// call, which must never wait on a caller (it reads the creator's answer,
// and holds the call's slot, lease and escrow), to the one that writes
// them to the caller, however slowly that caller reads. What it holds is
// bounded by the result's size.
//
// A relay started with Start writes on a goroutine that runs only while
// pieces wait to be written: a stream held open between pieces (a model
// thinking, thousands of streams at once) holds no goroutine, and its
// stack, for them (docs/performance.md).
type Relay struct {
	mu     sync.Mutex
	queue  []Piece
	closed bool
	wake   chan struct{}

	// Set by Start.
	ctx     context.Context
	write   func(Piece)
	writing bool
	stopped chan struct{} // closed when the writer stops, once closed
}

// Piece is one piece of an execution's streamed result.
type Piece struct{ ExecutionID, Text string }

// NewRelay returns an empty relay.
func NewRelay() *Relay { return &Relay{wake: make(chan struct{}, 1)} }

// Add queues a piece and returns at once: it is ExecuteParams.Deltas. A
// piece added once the relay is closed goes nowhere.
func (r *Relay) Add(executionID, text string) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, Piece{executionID, text})
	start := r.write != nil && !r.writing
	r.writing = r.writing || start
	r.mu.Unlock()
	if start {
		go r.drain()
	}
	r.poke()
}

// Close says that no piece follows.
func (r *Relay) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.poke()
}

func (r *Relay) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Take returns the pieces queued so far, and whether the relay is closed
// (no piece follows those).
func (r *Relay) Take() ([]Piece, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queue
	r.queue = nil
	return q, r.closed
}

// Wake is ready after a piece came or the relay closed, for a writer that
// waits on other things too.
func (r *Relay) Wake() <-chan struct{} { return r.wake }

// Start has write given each piece, in order, on a goroutine of its own
// while pieces wait, until ctx ends; the func it returns closes r and waits
// for the last piece to be written.
func (r *Relay) Start(ctx context.Context, write func(Piece)) (finish func()) {
	r.mu.Lock()
	r.ctx, r.write = ctx, write
	start := len(r.queue) > 0 && !r.writing
	r.writing = r.writing || start
	r.mu.Unlock()
	if start {
		go r.drain()
	}
	return func() {
		r.mu.Lock()
		r.closed = true
		if !r.writing {
			r.mu.Unlock()
			return
		}
		if r.stopped == nil {
			r.stopped = make(chan struct{})
		}
		stopped := r.stopped
		r.mu.Unlock()
		<-stopped
	}
}

// drain writes the pieces queued until none is, then stops.
func (r *Relay) drain() {
	for {
		r.mu.Lock()
		q := r.queue
		r.queue = nil
		if len(q) == 0 {
			r.writing = false
			if r.stopped != nil {
				close(r.stopped)
			}
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		for _, p := range q {
			// A caller that has gone is not written to.
			if r.ctx.Err() == nil {
				r.write(p)
			}
		}
	}
}
