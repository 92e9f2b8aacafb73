package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// rpcAnswer is one JSON-RPC response of an MCP POST.
type rpcAnswer struct {
	ID     int `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcpDo POSTs a JSON-RPC body to /mcp as an MCP client of protocol
// 2025-03-26 would, with key and session (empty for none), and returns
// the status, the session id the answer names, the responses it streamed
// and, when it streamed none, the body.
func mcpDo(ctx context.Context, url, key, session, body string) (int, string, []rpcAnswer, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, nil, err
	}
	var out []rpcAnswer
	for line := range bytes.Lines(raw) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: "))
		if !ok || len(data) == 0 {
			continue
		}
		var one []rpcAnswer
		if data[0] != '[' {
			data = append(append([]byte("["), data...), ']')
		}
		if err := json.Unmarshal(data, &one); err != nil {
			return 0, "", nil, nil, fmt.Errorf("answer %s: %w", data, err)
		}
		out = append(out, one...)
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), out, raw, nil
}

func mcpPost(t *testing.T, e *env, key, session, body string) (int, string, []rpcAnswer) {
	t.Helper()
	status, id, answers, _, err := mcpDo(bounded(t), e.d.URL, key, session, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, id, answers
}

const mcpInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// mcpOpen initializes as a 2025 client would, and checks that the
// stateless server opened no session.
func mcpOpen(t *testing.T, e *env, key string) {
	t.Helper()
	status, session, answers := mcpPost(t, e, key, "", mcpInitialize)
	if status != 200 || session != "" || len(answers) != 1 || answers[0].Error != nil {
		t.Fatalf("initialize: %d, session %q, %+v", status, session, answers)
	}
}

// Each call of a JSON-RPC batch counts against the key's rate limit, as
// that many REST requests would: of a batch of run_agent calls made with
// the limit spent, no more than the bucket's burst run, and the others are
// refused, each alone, as rate_limited, without charge.
func TestMCPBatchRateLimit(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.RateLimitKey = 1 }) // a burst of 2
	agent := m.list(newService(t, echo), "0.05")
	before := m.balance(m.callerW, crtx.Devnet)
	mcpOpen(t, m.env, m.key.Token()) // one of the burst
	const n = 20
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent_id":%q,"task":"x"}}}`, i+1, agent)
	}
	status, _, answers := mcpPost(t, m.env, m.key.Token(), "", "["+strings.Join(calls, ",")+"]")
	if status != 200 || len(answers) != n {
		t.Fatalf("batch: %d with %d answers, want 200 with %d", status, len(answers), n)
	}
	ran, limited := 0, 0
	for _, a := range answers {
		switch {
		case a.Result != nil && !a.Result.IsError:
			ran++
		case a.Result != nil && len(a.Result.Content) > 0 && strings.HasPrefix(a.Result.Content[0].Text, "rate_limited: "):
			limited++
		default:
			t.Errorf("answer %+v", a)
		}
	}
	// The burst is 2 and the initialize took one; a slow machine may have
	// earned one more since.
	if ran > 2 || ran+limited != n {
		t.Errorf("%d calls ran and %d were rate limited, of %d; want at most 2 to run", ran, limited, n)
	}
	if got := m.balance(m.callerW, crtx.Devnet).Available; got != before.Available-crtx.USDC(ran)*usdc("0.05") {
		t.Errorf("balance %s after %d runs, was %s", got, ran, before.Available)
	}
}

// The MCP server is stateless: an initialize opens no session (no
// Mcp-Session-Id), any request stands alone, an old session id is
// ignored, and thousands of initializes leave nothing behind. What a key
// holds open is its calls that wait for a run: each takes one of its stream
// slots, and one past them is refused before any money moves; a run as a
// task holds nothing.
func TestMCPStateless(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxStreamsPerKey = 2 })
	started, release := make(chan struct{}, 2), make(chan struct{})
	agent := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Task == "block" {
			started <- struct{}{}
			<-release
		}
		return "ok", 0, nil
	}), "0.05")
	key := m.key.Token()
	mcpOpen(t, m.env, key)
	for _, session := range []string{"", "a-session-of-yesterday"} {
		if status, _, answers := mcpPost(t, m.env, key, session, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); status != 200 || len(answers) != 1 || answers[0].Error != nil {
			t.Errorf("ping with session %q: %d %+v", session, status, answers)
		}
	}

	run := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent_id":%q,"task":"block"}}}`, id, agent)
	}
	runs := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, _, answers, _, err := mcpDo(ctx, m.d.URL, key, "", run(i+1))
			if err == nil && (len(answers) != 1 || answers[0].Result == nil || answers[0].Result.IsError) {
				err = fmt.Errorf("run_agent: %+v", answers)
			}
			runs <- err
		}()
	}
	<-started
	<-started
	before := m.balance(m.callerW, crtx.Devnet)
	_, _, answers := mcpPost(t, m.env, key, "", run(3))
	if len(answers) != 1 || answers[0].Result == nil || !answers[0].Result.IsError ||
		!strings.HasPrefix(answers[0].Result.Content[0].Text, "rate_limited: ") {
		t.Errorf("a third waiting run past the key's 2 stream slots: %+v, want rate_limited", answers)
	}
	if after := m.balance(m.callerW, crtx.Devnet); after != before {
		t.Errorf("the refused run moved money: %+v, was %+v", after, before)
	}
	// A run as a task holds no request open: it is answered at once.
	_, _, answers = mcpPost(t, m.env, key, "", fmt.Sprintf(
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent_id":%q,"task":"quick"},"task":{"ttl":60000}}}`, agent))
	if len(answers) != 1 || answers[0].Error != nil || answers[0].Result == nil || answers[0].Result.IsError {
		t.Errorf("a run as a task with the key's slots taken: %+v", answers)
	}
	close(release)
	for range 2 {
		if err := <-runs; err != nil {
			t.Error(err)
		}
	}

	// Many initializes, alone or in a batch, keep no goroutines.
	base := runtime.NumGoroutine()
	for range 40 {
		mcpOpen(t, m.env, key)
		mcpPost(t, m.env, key, "", "["+mcpInitialize+"]")
	}
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > base+10; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after 80 initializes, %d before", runtime.NumGoroutine(), base)
		}
	}
}

// A 2025 client cancels a waiting run_agent as the official TypeScript SDK
// does: notifications/cancelled naming the call's id, in a request of its
// own, the call's request left open. The pending execution is cancelled
// and refunded, and the call answers.
func TestMCPCancelByNotification(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	release := newGate(t)
	agent := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		if r.Task == "busy" {
			select {
			case <-release.c:
			case <-ctx.Done():
			}
		}
		return "ok", 0, nil
	}), "1")
	t.Cleanup(release.open)
	busy := m.occupy(agent)
	key := m.key.Token()
	answered := make(chan []rpcAnswer, 1)
	go func() {
		_, _, answers, _, _ := mcpDo(ctx, m.d.URL, key, "", fmt.Sprintf(
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent_id":%q,"task":"waiting"}}}`, agent))
		answered <- answers
	}()
	until(t, "the call's execution to be pending", func() bool {
		page, err := m.key.Executions(ctx, url.Values{"status": {"pending"}})
		return err == nil && len(page.Executions) == 1
	})
	// On PostgreSQL the notification reaches another replica than the
	// call's, as a stateless server's requests may, and is passed on.
	other := m.replica()
	if status, _, _, _, err := mcpDo(bounded(t), other, key, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`); err != nil || status != 202 {
		t.Errorf("the notification: %d %v, want 202", status, err)
	}
	select {
	case answers := <-answered:
		if len(answers) != 1 || answers[0].Result == nil || !answers[0].Result.IsError {
			t.Errorf("the cancelled call answered %+v, want a tool error", answers)
		}
	case <-bounded(t).Done():
		t.Fatal("the call did not end after its cancellation")
	}
	page, err := m.key.Executions(ctx, url.Values{"status": {"failed"}})
	if err != nil || len(page.Executions) != 1 {
		t.Fatalf("failed executions = %+v, %v; want the cancelled one", page, err)
	}
	if rec, err := m.key.Execution(ctx, page.Executions[0].ExecutionID); err != nil || rec.Error == nil || rec.Error.Code != "cancelled" {
		t.Errorf("the cancelled call's execution = %+v %v", rec, err)
	}
	release.open()
	if _, err := m.key.Wait(bounded(t), busy.ExecutionID, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9") || b.Escrowed != 0 {
		t.Errorf("balance %+v, want only the busy run paid", b)
	}
}

// A tasks/* request without params is refused, and the server lives on:
// the SDK hands the method a nil pointer, in a goroutine where a panic
// would end the process.
func TestMCPTaskMethodsWithoutParams(t *testing.T) {
	m := newMarket(t, "10")
	key := m.key.Token()
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/update", "tasks/list"} {
		_, _, answers := mcpPost(t, m.env, key, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i+1, method))
		if method == "tasks/list" {
			if len(answers) != 1 || answers[0].Error != nil {
				t.Errorf("%s without params: %+v, want the list", method, answers)
			}
			continue
		}
		if len(answers) != 1 || answers[0].Error == nil || answers[0].Error.Code != -32602 {
			t.Errorf("%s without params: %+v, want -32602", method, answers)
		}
	}
	if status, _, answers := mcpPost(t, m.env, key, "", `{"jsonrpc":"2.0","id":9,"method":"ping"}`); status != 200 || len(answers) != 1 {
		t.Fatalf("after them, ping: %d %+v", status, answers)
	}
}

// A page of another site cannot call the MCP endpoints (Streamable HTTP's
// Origin rule against DNS rebinding): 403 forbidden_origin. The
// marketplace's own origin, a loopback one (the developer's tools) and
// none (a program) are served.
func TestMCPOrigin(t *testing.T) {
	m := newMarket(t, "10")
	for _, c := range []struct {
		path, origin string
		want         int
	}{
		{"/mcp", "https://evil.example", 403}, {"/mcp", "null", 403}, {"/mcp/x402", "https://evil.example", 403},
		{"/mcp", m.d.URL, 200}, {"/mcp", "http://localhost:6274", 200}, {"/mcp", "http://[::1]:6274", 200}, {"/mcp", "", 200},
		{"/mcp/x402", m.d.URL, 200},
	} {
		req, _ := http.NewRequestWithContext(ctx, "POST", m.d.URL+c.path, strings.NewReader(mcpInitialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+m.key.Token())
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || (c.want == 403 && !strings.Contains(string(body), `"forbidden_origin"`)) {
			t.Errorf("%s from %q: %d %s, want %d", c.path, c.origin, resp.StatusCode, body, c.want)
		}
	}
}
