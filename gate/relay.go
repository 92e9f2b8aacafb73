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
type Relay struct {
	mu     sync.Mutex
	queue  []Piece
	closed bool
	wake   chan struct{}
}

// Piece is one piece of an execution's streamed result.
type Piece struct{ ExecutionID, Text string }

// NewRelay returns an empty relay.
func NewRelay() *Relay { return &Relay{wake: make(chan struct{}, 1)} }

// Add queues a piece and returns at once: it is ExecuteParams.Deltas.
func (r *Relay) Add(executionID, text string) {
	r.mu.Lock()
	r.queue = append(r.queue, Piece{executionID, text})
	r.mu.Unlock()
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

// Run gives write each piece, in order, until the relay is closed and
// empty, or ctx ends.
func (r *Relay) Run(ctx context.Context, write func(Piece)) {
	for {
		q, closed := r.Take()
		for _, p := range q {
			write(p)
		}
		if closed {
			return
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			return
		}
	}
}

// Start runs r in a goroutine of its own; the func it returns closes r and
// waits for the last piece to be written (or ctx to end).
func (r *Relay) Start(ctx context.Context, write func(Piece)) (finish func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, write)
	}()
	return func() {
		r.Close()
		<-done
	}
}
