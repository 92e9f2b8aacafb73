package a2a

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

// follow streams e's changes of state until it is final. A completed
// task's result comes as an artifact before the final status, so a client
// holds the result when the stream ends.
func (t *tasks) follow(ctx context.Context, c call, e crtx.Execution, contextID string, yield func(a2a.Event, error) bool) {
	_, _, err := t.m.Executions.Follow(ctx, e, func(e crtx.Execution, result string) bool {
		if state(e) == a2a.TaskStateCompleted && !yield(t.artifactEvent(e, result, contextID), nil) {
			return false
		}
		return yield(t.statusEvent(e, contextID), nil)
	})
	if err != nil && ctx.Err() == nil {
		yield(nil, t.protocolError(ctx, c, err))
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
		t.follow(ctx, c, e, "", yield)
	}
}
