package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Tasks (protocol 2025-11-25, experimental): a run_agent call made with
// a "task" parameter answers at once with a task, whose id is the
// execution's; tasks/get, tasks/result, tasks/cancel and tasks/list read and
// cancel the execution. The task lives as long as the execution's row, on
// every replica, so its ttl is null (unlimited).
//
// The SDK does not know Tasks yet: it drops the "task" parameter and has no
// place for the tasks capability or a tool's taskSupport. liftTask carries
// the parameter over in a header, and taskCalls adds the two declarations
// to the SDK's answers.

// taskHeader tells taskCalls that a tools/call asked to run as a task, and
// callIDHeader tells run the JSON-RPC id of its call (cancel.go): the SDK
// gives handlers neither.
const (
	taskHeader   = "Crtx-Mcp-Task"
	callIDHeader = "Crtx-Mcp-Call-Id"
)

// pollInterval is what a task tells its client to wait between reads.
const pollInterval = 500

const relatedTask = "io.modelcontextprotocol/related-task"

// task is the protocol's Task.
type task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

type taskParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

type listParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type taskResult struct {
	sdk.ResultBase
	task
}

type createTaskResult struct {
	sdk.ResultBase
	Task task `json:"task"`
}

type listTasksResult struct {
	sdk.ResultBase
	Tasks      []task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// rawResult is an SDK answer with what the SDK cannot express added.
type rawResult struct {
	sdk.ResultBase
	raw json.RawMessage
}

// MarshalJSON writes the answer with what the SDK set on it since: the
// server's identity in _meta, on protocol 2026-07-28 (SEP-2575).
func (r *rawResult) MarshalJSON() ([]byte, error) {
	if len(r.Meta) == 0 {
		return r.raw, nil
	}
	var m map[string]any
	if err := json.Unmarshal(r.raw, &m); err != nil {
		return nil, err
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	for k, v := range r.Meta {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	m["_meta"] = meta
	return json.Marshal(m)
}

func (s *server) addTasks(srv *sdk.Server) {
	mustAdd(sdk.AddReceivingCustomMethod(srv, "tasks/get", s.getTask))
	mustAdd(sdk.AddReceivingCustomMethod(srv, "tasks/result", s.taskResult))
	mustAdd(sdk.AddReceivingCustomMethod(srv, "tasks/cancel", s.cancelTask))
	mustAdd(sdk.AddReceivingCustomMethod(srv, "tasks/list", s.listTasks))
	mustAdd(sdk.AddReceivingCustomMethod(srv, "tasks/update", s.updateTask))
	srv.AddReceivingMiddleware(s.taskCalls)
}

func mustAdd(err error) {
	if err != nil {
		panic(err) // a method name the SDK calls standard: a programming error
	}
}

// liftTask marks a tools/call that carries the "task" parameter with
// taskHeader, which reaches the handler where the parameter does not, and
// a lone tools/call with its id (callIDHeader); and it passes a
// notifications/cancelled to the calls it names (cancel.go). A client's own
// headers of those names are dropped.
func (s *server) liftTask(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(taskHeader)
		r.Header.Del(callIDHeader)
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body) // bounded by the server's body limit
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				s.gate.Refuse(w, r, crtx.Errorf(crtx.CodeRequestTooLarge, "the body is larger than %d bytes", tooBig.Limit))
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Task      json.RawMessage `json:"task"`
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			parsed := json.Unmarshal(b, &msg) == nil
			if parsed && msg.Method == "notifications/cancelled" {
				if id, ok := callID(msg.Params.RequestID); ok {
					key := r.Context().Value(callerKey{}).(caller).p.Key.ID
					// The call is here, or it is another replica's to find.
					if !s.waiting.cancel(key, id) {
						s.market.Signal(cancelSignal, key+"/"+base64.RawURLEncoding.EncodeToString([]byte(id)))
					}
				}
			}
			if parsed && msg.Method == "tools/call" {
				if len(msg.Params.Task) > 0 && string(msg.Params.Task) != "null" {
					r.Header.Set(taskHeader, "1")
				}
				if id, ok := callID(msg.ID); ok {
					r.Header.Set(callIDHeader, id)
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		next.ServeHTTP(w, r)
	})
}

// asTaskKey holds, for a task-augmented call, the *crtx.Execution that
// run_agent opens and answers at once with.
type asTaskKey struct{}

// taskCalls declares the tasks capability and run_agent's optional task
// support, and answers a task-augmented run_agent with its task.
func (s *server) taskCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			return amend(res, err, func(m map[string]any) {
				if caps, ok := m["capabilities"].(map[string]any); ok {
					caps["tasks"] = map[string]any{"list": struct{}{}, "cancel": struct{}{},
						"requests": map[string]any{"tools": map[string]any{"call": struct{}{}}}}
				}
			})
		case "tools/list":
			res, err := next(ctx, method, req)
			return amend(res, err, func(m map[string]any) {
				if modern(metaOf(req)) {
					m["resultType"] = "complete" // the SDK stamps only its own types
				}
				tools, _ := m["tools"].([]any)
				for _, t := range tools {
					if t, ok := t.(map[string]any); ok && t["name"] == "run_agent" {
						t["execution"] = map[string]any{"taskSupport": "optional"}
					}
				}
			})
		case "tools/call":
			p, _ := req.GetParams().(*sdk.CallToolParamsRaw)
			extra := req.GetExtra()
			// 2025-11-25's "task" parameter; a 2026-07-28 client asks for
			// tasks with the extension only.
			asked := extra != nil && extra.Header.Get(taskHeader) != "" && !modern(metaOf(req))
			ext := p != nil && p.Name == "run_agent" && handlesTasks(p.Meta)
			if !asked && !ext {
				break
			}
			if p == nil || p.Name != "run_agent" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "only run_agent runs as a task"}
			}
			// run fills opened in when it opens the execution: from then
			// on money is held, and the answer is the task, whatever else.
			var opened crtx.Execution
			res, err := next(context.WithValue(ctx, asTaskKey{}, &opened), method, req)
			if opened.ID == "" {
				return res, err // refused before any execution opened: the tool's answer
			}
			if ext {
				return extTaskOf(opened, "task"), nil
			}
			t := taskOf(opened)
			r := &createTaskResult{Task: t}
			r.Meta = sdk.Meta{"io.modelcontextprotocol/model-immediate-response": "execution " + t.TaskID + " started; its result comes with tasks/result"}
			return r, nil
		}
		return next(ctx, method, req)
	}
}

// metaOf is a request's _meta, if it has params.
func metaOf(req sdk.Request) map[string]any {
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		return p.GetMeta()
	}
	return nil
}

// amend rewrites an SDK result through its JSON.
func amend(res sdk.Result, err error, change func(map[string]any)) (sdk.Result, error) {
	if err != nil || res == nil {
		return res, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	change(m)
	if b, err = json.Marshal(m); err != nil {
		return nil, err
	}
	return &rawResult{raw: b}, nil
}

// task reads the execution behind a task as the caller sees it.
func (s *server) task(ctx context.Context, id string) (task, error) {
	e, _, err := s.execution(ctx, id)
	if err != nil {
		return task{}, err
	}
	return taskOf(e), nil
}

// execution reads the caller's execution, or answers the protocol's error
// for an unknown task.
func (s *server) execution(ctx context.Context, id string) (crtx.Execution, string, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return crtx.Execution{}, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	e, result, err := s.market.Executions.GetExecution(ctx, c.p, id)
	var ce *crtx.Error
	if errors.As(err, &ce) {
		return e, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no task " + strconv.Quote(id) + ": " + ce.Message}
	}
	return e, result, s.toolError(err)
}

// taskOf is an execution as a task: pending and running are working; a
// failure is failed unless the caller cancelled it.
func taskOf(e crtx.Execution) task {
	t := task{TaskID: e.ID, Status: "working", CreatedAt: e.InitiatedAt.Format(time.RFC3339Nano),
		LastUpdatedAt: e.InitiatedAt.Format(time.RFC3339Nano), PollInterval: pollInterval,
		StatusMessage: "the execution is " + string(e.Status)}
	if e.DispatchedAt != nil {
		t.LastUpdatedAt = e.DispatchedAt.Format(time.RFC3339Nano)
	}
	if e.CompletedAt != nil {
		t.LastUpdatedAt = e.CompletedAt.Format(time.RFC3339Nano)
	}
	switch {
	case e.Status == crtx.ExecCompleted || e.Status == crtx.ExecDisputed:
		t.Status = "completed"
	case e.Status == crtx.ExecFailed && e.ErrorCode == crtx.CodeCancelled:
		t.Status, t.StatusMessage = "cancelled", e.ErrorMessage
	case e.Status == crtx.ExecFailed:
		t.Status, t.StatusMessage = "failed", e.ErrorCode+": "+e.ErrorMessage
	}
	return t
}

// noTask refuses a tasks/* request without params: the SDK hands the
// method a nil pointer then.
var noTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"}

func (s *server) getTask(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (sdk.Result, error) {
	if p == nil {
		return nil, noTask
	}
	if modern(p.Meta) {
		return s.getExtTask(ctx, p)
	}
	t, err := s.task(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	return &taskResult{task: t}, nil
}

// taskResult waits for the execution to be final and answers what
// run_agent would have answered.
func (s *server) taskResult(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*sdk.CallToolResult, error) {
	if p == nil {
		return nil, noTask
	}
	e, result, err := s.execution(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if !e.Status.Final() {
		c, _ := callerOf(ctx) // s.execution found it
		release, err := s.gate.AdmitStream(c.p.Key.ID)
		if err != nil {
			return nil, rateLimited(err)
		}
		defer release()
		if e, result, err = s.market.Executions.Follow(ctx, e, nil); err != nil {
			return nil, s.toolError(err)
		}
	}
	res := s.finalResult(e, result)
	res.Meta = sdk.Meta{relatedTask: map[string]any{"taskId": e.ID}}
	return res, nil
}

// finalResult is what run_agent answers for a final execution, a refunded
// failure as a tool error: a task's result, on either protocol.
func (s *server) finalResult(e crtx.Execution, result string) *sdk.CallToolResult {
	res, out, err := s.answer(e, result)
	if err != nil {
		res = &sdk.CallToolResult{}
		res.SetError(err)
	} else {
		res.StructuredContent = out
	}
	return res
}

// rateLimited is a refusal of the key's limits as a JSON-RPC error of the
// server's own (-32000), with the crtx code and when to try again as data.
func rateLimited(err error) error {
	var e *crtx.Error
	if !errors.As(err, &e) {
		return err
	}
	data, _ := json.Marshal(map[string]any{"code": e.Code, "retry_after_seconds": e.RetryAfter})
	return &jsonrpc.Error{Code: -32000, Message: e.Message, Data: data}
}

// cancelTask cancels a pending execution, refunding it. One already sent
// to its creator cannot be: its creator is working and will be paid.
func (s *server) cancelTask(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (sdk.Result, error) {
	if p == nil {
		return nil, noTask
	}
	if modern(p.Meta) {
		return s.cancelExtTask(ctx, p)
	}
	c, err := callerOf(ctx)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	t, err := s.task(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if t.Status != "working" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + p.TaskID + " is already " + t.Status}
	}
	e, err := s.market.Executions.Cancel(ctx, c.p, p.TaskID)
	var ce *crtx.Error
	if errors.As(err, &ce) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ce.Error()}
	}
	if err != nil {
		return nil, s.toolError(err)
	}
	return &taskResult{task: taskOf(e)}, nil
}

const tasksPage = 50

// listTasks lists the caller's executions, newest first; the cursor is
// the offset of the next page.
func (s *server) listTasks(ctx context.Context, _ *sdk.ServerSession, p *listParams) (*listTasksResult, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	offset := 0
	if p != nil && p.Cursor != "" {
		if offset, err = strconv.Atoi(p.Cursor); err != nil || offset < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the cursor is not one tasks/list gave"}
		}
	}
	es, total, err := s.market.Executions.Executions(ctx, crtx.ExecutionQuery{Wallet: c.p.Wallet, Environment: c.p.Environment(), Limit: tasksPage, Offset: offset})
	if err != nil {
		return nil, s.toolError(err)
	}
	out := &listTasksResult{Tasks: make([]task, 0, len(es))}
	for _, e := range es {
		out.Tasks = append(out.Tasks, taskOf(e))
	}
	if next := offset + len(es); next < total && len(es) > 0 {
		out.NextCursor = strconv.Itoa(next)
	}
	return out, nil
}
