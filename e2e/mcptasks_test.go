package e2e_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// tasksClient is another implementation's MCP client (mcp-go, which knows
// the experimental Tasks), at protocol 2025-11-25.
func tasksClient(t *testing.T, e *env, key *client.Client) (*mcpgo.Client, *mcp.InitializeResult) {
	t.Helper()
	c, err := mcpgo.NewStreamableHttpClient(e.d.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key.Token()}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: "2025-11-25",
		ClientInfo: mcp.Implementation{Name: "crtx-test", Version: "1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, init
}

// startTask sends run_agent as a task-augmented tools/call. The client has
// no typed call for it, so it goes through the client's own transport.
func startTask(t *testing.T, c *mcpgo.Client, id int64, args map[string]any) (mcp.Task, *mcp.JSONRPCErrorDetails) {
	t.Helper()
	ttl := int64(60000)
	resp, err := c.GetTransport().SendRequest(bounded(t), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(id), Method: "tools/call",
		Params: mcp.CallToolParams{Name: "run_agent", Arguments: args, Task: &mcp.TaskParams{TTL: &ttl}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		return mcp.Task{}, resp.Error
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("not a CreateTaskResult: %s (%v)", resp.Result, err)
	}
	return created.Task, nil
}

func TestMCPTasks(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	agent := m.list(newService(t, slow(300*time.Millisecond)), "1")
	c, init := tasksClient(t, m.env, m.key)
	if tc := init.Capabilities.Tasks; tc == nil || tc.List == nil || tc.Cancel == nil || tc.Requests == nil || tc.Requests.Tools == nil || tc.Requests.Tools.Call == nil {
		t.Fatalf("tasks capability = %+v", init.Capabilities.Tasks)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		want := ""
		if tl.Name == "run_agent" {
			want = "optional"
		}
		got := ""
		if tl.Execution != nil {
			got = string(tl.Execution.TaskSupport)
		}
		if got != want {
			t.Errorf("%s taskSupport = %q, want %q", tl.Name, got, want)
		}
	}

	first, rpcErr := startTask(t, c, 100, map[string]any{"agent_id": agent, "task": "first"})
	if rpcErr != nil {
		t.Fatal(rpcErr.Message)
	}
	second, rpcErr := startTask(t, c, 101, map[string]any{"agent_id": agent, "task": "second"})
	if rpcErr != nil {
		t.Fatal(rpcErr.Message)
	}
	if first.Status != mcp.TaskStatusWorking || first.TTL != nil || first.PollInterval == nil || first.CreatedAt == "" {
		t.Errorf("created task = %+v", first)
	}
	// One dispatch slot: the second waits, pending, and can be cancelled.
	cancelled, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: second.TaskId}})
	if err != nil || cancelled.Status != mcp.TaskStatusCancelled {
		t.Fatalf("cancel the pending task: %+v %v", cancelled, err)
	}

	done, err := c.WaitForTask(bounded(t), mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: first.TaskId}}, 50*time.Millisecond)
	if err != nil || done.Status != mcp.TaskStatusCompleted {
		t.Fatalf("first task ended %+v %v", done, err)
	}
	res, err := c.TaskResult(bounded(t), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: first.TaskId}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("tasks/result: %+v %v", res, err)
	}
	if text, _ := res.Content[0].(mcp.TextContent); text.Text != "slow first" {
		t.Errorf("result text = %+v", res.Content[0])
	}
	if rel, _ := res.Meta.AdditionalFields["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != first.TaskId {
		t.Errorf("tasks/result _meta = %+v", res.Meta)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"execution_id":"`+first.TaskId+`"`) || !strings.Contains(string(b), `"status":"completed"`) {
		t.Errorf("structured result = %s", b)
	}
	// A finished task cannot be cancelled; an unknown one is not there.
	if _, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: first.TaskId}}); !errors.Is(err, mcp.ErrInvalidParams) {
		t.Errorf("cancel a completed task: %v, want invalid params (-32602)", err)
	}
	if _, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: crtx.NewUUID()}}); !errors.Is(err, mcp.ErrInvalidParams) {
		t.Errorf("get an unknown task: %v, want invalid params (-32602)", err)
	}
	// Another wallet's key sees none of these tasks.
	w := newWallet(t)
	k, err := m.signIn(w).CreateKey(ctx, client.KeyParams{Name: "stranger", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	runLogs.secret(k.Key, w.address)
	stranger, _ := tasksClient(t, m.env, m.anon.WithToken(k.Key))
	if _, err := stranger.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: first.TaskId}}); !errors.Is(err, mcp.ErrInvalidParams) {
		t.Errorf("another wallet's task: %v", err)
	}
	if _, err := stranger.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: second.TaskId}}); !errors.Is(err, mcp.ErrInvalidParams) {
		t.Errorf("cancel another wallet's task: %v", err)
	}
	if l, err := stranger.ListTasks(ctx, mcp.ListTasksRequest{}); err != nil || len(l.Tasks) != 0 {
		t.Errorf("another wallet's tasks/list: %+v %v", l, err)
	}

	// The cancelled task's result is the run's error: it was refunded.
	res, err = c.TaskResult(bounded(t), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: second.TaskId}})
	if err != nil || !res.IsError {
		t.Errorf("cancelled task's result: %+v %v", res, err)
	}
	list, err := c.ListTasks(ctx, mcp.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 2 {
		t.Fatalf("tasks/list: %+v %v", list, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("9") {
		t.Errorf("balance %+v, want the completed task paid once and the cancelled one refunded", b)
	}

	// A refusal is the tool's answer, with no task to follow.
	resp, err := c.GetTransport().SendRequest(bounded(t), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(102)), Method: "tools/call",
		Params: mcp.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent_id": agent, "task": "x", "max_cost_usdc": 0.5}, Task: &mcp.TaskParams{}}})
	if err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), "price_changed: ") || !strings.Contains(string(resp.Result), `"isError":true`) {
		t.Errorf("refused task: %+v %v", resp, err)
	}
	// Only run_agent runs as a task.
	resp, err = c.GetTransport().SendRequest(bounded(t), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(103)), Method: "tools/call",
		Params: mcp.CallToolParams{Name: "get_agent", Arguments: map[string]any{"agent_id": agent}, Task: &mcp.TaskParams{}}})
	if err != nil || resp.Error == nil || resp.Error.Code != -32601 {
		t.Errorf("get_agent as a task: %+v", resp)
	}
}
