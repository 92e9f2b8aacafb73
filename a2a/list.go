package a2a

import (
	"context"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

// defaultPageSize and maxPageSize are A2A's for ListTasks; maxOffset is
// the REST list's, past which no page token is handed out.
const (
	defaultPageSize = 50
	maxPageSize     = 100
	maxOffset       = 1 << 30
)

// storeStatus is the execution status a task state filter reads from the
// store. Canceled and failed tasks are both failed executions (told apart
// by the error code); states an execution never has match nothing.
func storeStatus(st a2a.TaskState) (status crtx.ExecStatus, none bool, err error) {
	switch st {
	case a2a.TaskStateUnspecified:
		return "", false, nil
	case a2a.TaskStateSubmitted:
		return crtx.ExecPending, false, nil
	case a2a.TaskStateWorking:
		return crtx.ExecRunning, false, nil
	case a2a.TaskStateCompleted:
		return crtx.ExecCompleted, false, nil
	case a2a.TaskStateFailed, a2a.TaskStateCanceled:
		return crtx.ExecFailed, false, nil
	case a2a.TaskStateInputRequired, a2a.TaskStateRejected, a2a.TaskStateAuthRequired:
		return "", true, nil
	}
	return "", false, crtx.InvalidField("status", "%q is not a task state", string(st))
}

// ListTasks lists the tasks of this agent that the key's wallet started in
// the key's environment, newest first (by when they started: the store's
// order). The page token is an offset this method hands out. Filters the
// store cannot apply (a status timestamp, canceled against failed) are
// applied to the page read, so a page may hold fewer than pageSize tasks
// while more follow, and totalSize counts before them.
func (t *tasks) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	out, err := t.list(ctx, c, req)
	if err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	return out, nil
}

func (t *tasks) list(ctx context.Context, c call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	size := req.PageSize
	if size == 0 {
		size = defaultPageSize
	}
	if size < 1 || size > maxPageSize {
		return nil, crtx.InvalidField("pageSize", "must be 1 to %d", maxPageSize)
	}
	offset := 0
	if req.PageToken != "" {
		n, err := strconv.Atoi(req.PageToken)
		if err != nil || n < 0 || n > maxOffset {
			return nil, crtx.InvalidField("pageToken", "is not a token this endpoint handed out")
		}
		offset = n
	}
	status, none, err := storeStatus(req.Status)
	if err != nil {
		return nil, err
	}
	out := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, PageSize: size}
	if none {
		return out, nil
	}
	var list []crtx.Execution
	if req.ContextID != "" {
		// A task's context is its execution's id: at most one matches.
		e, _, err := t.own(ctx, c, req.ContextID)
		switch {
		case crtx.ErrorCode(err) == crtx.CodeExecutionNotFound:
		case err != nil:
			return nil, err
		case status == "" || e.Status == status:
			list, out.TotalSize = []crtx.Execution{e}, 1
		}
	} else {
		list, out.TotalSize, err = t.m.Executions.Executions(ctx, crtx.ExecutionQuery{Wallet: c.principal.Wallet, Environment: c.principal.Environment(),
			AgentID: c.agentID, KeyID: c.principal.Connector(), Status: status, Limit: size, Offset: offset})
		if err != nil {
			return nil, err
		}
		if offset+len(list) < out.TotalSize {
			out.NextPageToken = strconv.Itoa(offset + len(list))
		}
	}
	for _, e := range list {
		if req.Status != a2a.TaskStateUnspecified && state(e) != req.Status {
			continue
		}
		if req.StatusTimestampAfter != nil && !stateTime(e).After(*req.StatusTimestampAfter) {
			continue
		}
		result := ""
		if req.IncludeArtifacts && e.ResultCID != "" {
			if result, err = t.m.Executions.ExecutionResult(ctx, e); err != nil {
				return nil, err
			}
		}
		out.Tasks = append(out.Tasks, t.task(e, result, "", req.IncludeArtifacts))
	}
	return out, nil
}
