package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestCancel(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	agent := m.list(newService(t, slow(400*time.Millisecond)), "1")
	busy := m.occupy(agent)
	waiting, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "waiting", Async: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != usdc("2") {
		t.Fatalf("escrowed %s", b.Escrowed)
	}
	var rec api.ExecutionRecord
	if err := m.key.Do(ctx, "POST", "/v1/executions/"+waiting.ExecutionID+"/cancel", "", nil, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Status != "failed" || rec.Error == nil || rec.Error.Code != "cancelled" || rec.CompletedAt == nil {
		t.Errorf("cancelled record = %+v", rec)
	}
	err = m.key.Do(ctx, "POST", "/v1/executions/"+busy.ExecutionID+"/cancel", "", nil, nil)
	if ce := wantCode(t, err, 409, "not_cancellable"); ce.ExecutionID == nil || *ce.ExecutionID != busy.ExecutionID {
		t.Errorf("409 without the execution id")
	}
	wantCode(t, m.key.Do(ctx, "POST", "/v1/executions/"+crtx.NewUUID()+"/cancel", "", nil, nil), 404, "execution_not_found")
	wantCode(t, m.liveKey.Do(ctx, "POST", "/v1/executions/"+busy.ExecutionID+"/cancel", "", nil, nil), 404, "execution_not_found")
	final, _ := m.key.Wait(bounded(t), busy.ExecutionID, 20*time.Millisecond)
	if final.Status != "completed" {
		t.Errorf("busy ended %s", final.Status)
	}
	// The cancelled one never reaches the creator, even once a slot frees.
	time.Sleep(100 * time.Millisecond)
	if r, _ := m.key.Execution(ctx, waiting.ExecutionID); r.Status != "failed" {
		t.Errorf("cancelled execution is now %s", r.Status)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("9") {
		t.Errorf("balance %+v", b)
	}
	// The key spent what the completed run cost; the cancelled one is off it.
	keys, _ := m.callerC.Keys(ctx)
	for _, k := range keys {
		if k.Environment == crtx.Devnet && k.RevokedAt == nil && (k.ExecutionCount != 2 || k.TotalSpent != usdc("1")) {
			t.Errorf("the key after a cancellation: %d executions, %s spent; want 2, 1", k.ExecutionCount, k.TotalSpent)
		}
	}
	wantCode(t, m.key.Do(ctx, "POST", "/v1/executions/"+busy.ExecutionID+"/cancel", "", nil, nil), 409, "not_cancellable")
	// A cancellation is not the agent's failure: one run, completed, 100 %.
	m.rollup()
	if a, err := m.anon.Agent(ctx, agent, crtx.Devnet); err != nil || a.SuccessfulExecutions != 1 || a.SuccessRate != 1 {
		t.Errorf("agent after a cancellation: %d successful, success rate %v, %v; want 1 and 1", a.SuccessfulExecutions, a.SuccessRate, err)
	}
}

func TestEvents(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(300*time.Millisecond)), "1")
	acc, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "watch", Async: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", m.d.URL+"/v1/executions/"+acc.ExecutionID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+m.key.Token())
	resp, err := m.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	var events []string
	var last api.ExecutionRecord
	sc := bufio.NewScanner(resp.Body)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			line := sc.Text()
			if ev, ok := strings.CutPrefix(line, "event: "); ok {
				events = append(events, ev)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				json.Unmarshal([]byte(data), &last)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not close after the final event")
	}
	if len(events) < 2 || events[len(events)-1] != "completed" || last.Status != "completed" || *last.Result != "slow watch" {
		t.Errorf("events %v, last %+v", events, last)
	}
	for i := 1; i < len(events); i++ {
		if events[i] == events[i-1] {
			t.Errorf("a status was sent twice: %v", events)
		}
	}
	wantCode(t, m.liveKey.Do(ctx, "GET", "/v1/executions/"+acc.ExecutionID+"/events", "", nil, nil), 404, "execution_not_found")
}

// A key has at most --max-streams-per-key streams open: the next, over
// REST, A2A or MCP, is refused as rate_limited until one closes. Another
// key is not counted with it.
func TestStreamsPerKey(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxStreamsPerKey = 2 })
	held := make(chan struct{})
	agent := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			select {
			case <-held:
			case <-ctx.Done():
			}
		}
		return "held " + r.Task, 0, nil
	}), "1")
	acc, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "watched", Async: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := acc.ExecutionID
	stream := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(bounded(t), "GET", m.d.URL+"/v1/executions/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+m.key.Token())
		// Not m.http, which reads a response to its end before answering.
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first, second := stream(), stream()
	defer second.Body.Close()
	if first.StatusCode != 200 || second.StatusCode != 200 {
		t.Fatalf("streams within the limit answered %d and %d", first.StatusCode, second.StatusCode)
	}

	ce := wantCode(t, m.key.Do(ctx, "GET", "/v1/executions/"+id+"/events", "", nil, nil), 429, "rate_limited")
	if ce.RetryAfter == "" {
		t.Error("429 without Retry-After")
	}
	a := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	var subscribed error
	for _, err := range a.SubscribeToTask(a.ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(id)}) {
		subscribed = err
	}
	wantA2A(t, subscribed, a2a.ErrServerError, "rate_limited")
	mc, _ := tasksClient(t, m.env, m.key)
	resp, err := mc.GetTransport().SendRequest(bounded(t), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(7)),
		Method: "tasks/result", Params: map[string]any{"taskId": id}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error == nil || resp.Error.Code != -32000 || !strings.Contains(fmt.Sprint(resp.Error.Data), "rate_limited") {
		t.Errorf("MCP tasks/result over the limit: %+v, %s", resp.Error, resp.Result)
	}
	// Another key's request is its own: here, not found on mainnet.
	wantCode(t, m.liveKey.Do(ctx, "GET", "/v1/executions/"+id+"/events", "", nil, nil), 404, "execution_not_found")

	// Closing a stream frees its place, once the server sees it closed.
	first.Body.Close()
	third := stream()
	for deadline := time.Now().Add(10 * time.Second); third.StatusCode == 429 && time.Now().Before(deadline); third = stream() {
		third.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	defer third.Body.Close()
	if third.StatusCode != 200 {
		t.Fatalf("a stream after one closed answered %d", third.StatusCode)
	}
	close(held)
	for _, r := range []*http.Response{second, third} {
		var events []string
		for sc := bufio.NewScanner(r.Body); sc.Scan(); {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events = append(events, ev)
			}
		}
		if len(events) == 0 || events[len(events)-1] != "completed" {
			t.Errorf("a stream within the limit sent %v", events)
		}
	}
}
