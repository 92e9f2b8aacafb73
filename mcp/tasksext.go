package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/crtx-market/crtx"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Tasks extension of protocol 2026-07-28 (io.modelcontextprotocol/tasks,
// SEP-2663; specification/2026-07-28/tasks.md of modelcontextprotocol/
// ext-tasks). A request of that protocol says in its _meta which
// extensions its client handles; run_agent from a client that handles
// Tasks always answers a task ("the server is the sole decider"): a paid
// run may take minutes, and with no stream resumption in this protocol a
// task is what survives a broken connection without paying twice. The
// task is the execution, as for the 2025-11-25 Tasks of tasks.go; what
// differs is the wire:
//   - the CreateTaskResult is the Task itself, flattened, with
//     resultType "task" ("Task Creation");
//   - tasks/get answers the DetailedTask with resultType "complete": a
//     finished run carries its CallToolResult in result, a refunded failure
//     too, as a tool error (isError), since "failed" is only for JSON-RPC
//     errors ("Task Status");
//   - tasks/cancel and tasks/update answer an empty acknowledgement
//     ("Task Cancellation", "Task Update Requests"); a run never asks for
//     input, so every inputResponses key is one not outstanding, ignored;
//   - ttlMs and pollIntervalMs are named so; there is no tasks/list or
//     tasks/result.

const tasksExtension = "io.modelcontextprotocol/tasks"

// modern tells a request of protocol 2026-07-28 or later by its _meta
// (SEP-2575: every such request carries its version there).
func modern(meta map[string]any) bool {
	v, _ := meta[sdk.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

// handlesTasks tells whether a 2026-07-28 request's client declared the
// Tasks extension in its per-request capabilities ("Capability
// Negotiation": the server MUST NOT answer a task otherwise).
func handlesTasks(meta map[string]any) bool {
	if !modern(meta) {
		return false
	}
	caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[tasksExtension]
	return ok
}

// extTask is the extension's Task, and with Result or Error its
// DetailedTask.
type extTask struct {
	sdk.ResultBase
	ResultType     string         `json:"resultType"`
	TaskID         string         `json:"taskId"`
	Status         string         `json:"status"`
	StatusMessage  string         `json:"statusMessage,omitempty"`
	CreatedAt      string         `json:"createdAt"`
	LastUpdatedAt  string         `json:"lastUpdatedAt"`
	TTLMs          *int64         `json:"ttlMs"`
	PollIntervalMs int64          `json:"pollIntervalMs"`
	Result         map[string]any `json:"result,omitempty"`
}

// ack is the empty acknowledgement of tasks/cancel and tasks/update.
type ack struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

type updateParams struct {
	sdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// extTaskOf is an execution as the extension's Task. Its status is the
// 2025 task's, except that a failed run is "completed" with its tool error
// (answered by tasks/get), not "failed".
func extTaskOf(e crtx.Execution, resultType string) *extTask {
	t := taskOf(e)
	if t.Status == "failed" {
		t.Status = "completed"
	}
	return &extTask{ResultType: resultType, TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, PollIntervalMs: t.PollInterval}
}

// getExtTask answers tasks/get of the extension, the finished run's
// result inline.
func (s *server) getExtTask(ctx context.Context, p *taskParams) (*extTask, error) {
	e, result, err := s.execution(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	t := extTaskOf(e, "complete")
	if t.Status == "completed" {
		// The result is a complete CallToolResult of 2026-07-28, which says
		// so; the SDK writes resultType only on what it sends itself.
		b, err := json.Marshal(s.finalResult(e, result))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &t.Result); err != nil {
			return nil, err
		}
		t.Result["resultType"] = "complete"
	}
	return t, nil
}

// cancelExtTask acknowledges tasks/cancel of a known task. Cancelling is
// cooperative: a pending execution is cancelled and refunded; one already
// sent to its creator runs on and is paid, which tasks/get then shows.
func (s *server) cancelExtTask(ctx context.Context, p *taskParams) (*ack, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	e, _, err := s.execution(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if !e.Status.Final() {
		var refused *crtx.Error
		if _, err := s.market.Executions.Cancel(ctx, c.p, p.TaskID); err != nil && !errors.As(err, &refused) {
			return nil, s.toolError(err)
		}
	}
	return &ack{ResultType: "complete"}, nil
}

// updateTask acknowledges tasks/update of a known task: a run asks for no
// input, so there is nothing outstanding to answer.
func (s *server) updateTask(ctx context.Context, _ *sdk.ServerSession, p *updateParams) (*ack, error) {
	if p == nil {
		return nil, noTask
	}
	if _, _, err := s.execution(ctx, p.TaskID); err != nil {
		return nil, err
	}
	return &ack{ResultType: "complete"}, nil
}
