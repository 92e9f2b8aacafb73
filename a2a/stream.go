package a2a

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
)

// follow streams e's changes of state until it is final. A completed
// task's result comes as an artifact before the final status, so a client
// holds the result when the stream ends. pieces, when not nil, brings a
// streaming creator's pieces as they are written: each is a chunk of the
// result artifact (the first new, the others appended), and the completed
// task's last chunk then carries the settlement alone (lastChunk), as the
// text came already.
func (t *tasks) follow(ctx context.Context, c call, e crtx.Execution, contextID string, yield func(a2a.Event, error) bool, pieces *gate.Relay) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type change struct {
		e      crtx.Execution
		result string
	}
	changes, done := make(chan change), make(chan error, 1)
	go func() {
		_, _, err := t.m.Executions.Follow(ctx, e, func(e crtx.Execution, result string) bool {
			select {
			case changes <- change{e, result}:
				return true
			case <-ctx.Done():
				return false
			}
		})
		done <- err
	}()
	sent := 0
	// given yields the pieces the relay holds; false when the client has
	// gone.
	given := func() bool {
		if pieces == nil {
			return true
		}
		q, _ := pieces.Take()
		for _, p := range q {
			sent++
			if !yield(t.pieceEvent(e, p.Text, sent > 1, contextID), nil) {
				return false
			}
		}
		return true
	}
	var wake <-chan struct{}
	if pieces != nil {
		wake = pieces.Wake()
	}
	for {
		select {
		case <-wake:
			if !given() {
				return
			}
		case ch := <-changes:
			// The run sent every piece before it closed the call: they
			// go before its final state.
			if ch.e.Status.Final() && !given() {
				return
			}
			if state(ch.e) == a2a.TaskStateCompleted {
				last := t.artifactEvent(ch.e, ch.result, contextID)
				if sent > 0 {
					last.Append, last.Artifact.Parts = true, last.Artifact.Parts[1:]
				}
				if !yield(last, nil) {
					return
				}
			}
			if !yield(t.statusEvent(ch.e, contextID), nil) {
				return
			}
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				yield(nil, t.protocolError(ctx, c, err))
			}
			return
		}
	}
}

// SubscribeToTask streams a task that is not final yet: the task as it
// stands, then its changes until it is.
func (t *tasks) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c, err := callFrom(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		release, err := t.gate.AdmitStream(c.principal.Key.ID)
		if err != nil {
			yield(nil, t.protocolError(ctx, c, err))
			return
		}
		defer release()
		e, result, err := t.own(ctx, c, string(req.ID))
		if err != nil {
			yield(nil, t.protocolError(ctx, c, err))
			return
		}
		if e.Status.Final() {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, "the task has ended ("+string(e.Status)+"); read it with GetTask").
				WithDetails(map[string]any{"execution_id": e.ID, "status": string(e.Status)}))
			return
		}
		if !yield(t.task(e, result, "", true), nil) {
			return
		}
		t.follow(ctx, c, e, "", yield, nil)
	}
}
