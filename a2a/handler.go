package a2a

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/crtx-market/crtx"
)

// tasks answers the A2A methods, its tasks being executions: the SDK's
// task store and executor are not used, since the execution row already
// is the task, shared by every replica.
type tasks struct {
	*server
}

var _ a2asrv.RequestHandler = (*tasks)(nil)

// own reads one of the caller's executions of this endpoint's agent;
// another agent's, like another wallet's, is not found.
func (t *tasks) own(ctx context.Context, c call, id string) (crtx.Execution, string, error) {
	if id == "" {
		return crtx.Execution{}, "", crtx.InvalidField("id", "is required")
	}
	e, result, err := t.m.Executions.GetExecution(ctx, c.principal, id)
	if err == nil && e.AgentID != c.agentID {
		err = crtx.Errorf(crtx.CodeExecutionNotFound, "no execution %q for this key", id)
	}
	return e, result, err
}

// GetTask reads a task: its execution as it stands.
func (t *tasks) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	c, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	e, result, err := t.own(ctx, c, string(req.ID))
	if err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	return t.task(e, result, "", true), nil
}

// CancelTask cancels a task that is still waiting for dispatch, refunding
// its escrow; one the agent already works on, or one that ended (a
// cancelled one too, as A2A 1.0 §3.1.5 says), is TaskNotCancelable.
func (t *tasks) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	c, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	e, _, err := t.own(ctx, c, string(req.ID))
	if err == nil {
		e, err = t.m.Executions.Cancel(ctx, c.principal, e.ID)
	}
	if err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	return t.task(e, "", "", true), nil
}

// GetExtendedAgentCard: the public card says everything there is.
func (t *tasks) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if _, err := callFrom(ctx); err != nil {
		return nil, err
	}
	return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "this agent has no extended card: its public card says all there is")
}
