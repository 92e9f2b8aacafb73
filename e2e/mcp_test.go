package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// withKey adds an API key to every request of an MCP client.
type withKey struct{ key string }

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// progressLog keeps the progress notifications a client was sent.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *progressLog) add(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Params.Message)
}

func (l *progressLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs)
}

// completed waits (the client may hand notifications over after the
// result) for the notification that the run completed, and returns the
// messages told, with the pieces of the result among them; none if it
// was not told.
func (l *progressLog) completed() (all, pieces []string) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		all = l.all()
		if len(all) > 0 && strings.HasSuffix(all[len(all)-1], " is completed") {
			break
		}
		if time.Now().After(deadline) {
			return all, nil
		}
	}
	for _, msg := range all {
		if !strings.HasPrefix(msg, "execution ") {
			pieces = append(pieces, msg)
		}
	}
	return all, pieces
}

// mcpSession connects the official Go SDK's client to crtxd's /mcp with key.
func mcpSession(t *testing.T, e *env, key *client.Client, progress *progressLog) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.add
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.d.URL + "/mcp",
		HTTPClient: &http.Client{Transport: withKey{key.Token()}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured answer into out; it
// returns the text of a tool error, or "" on success.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	return callWith(t, cs, &sdk.CallToolParams{Name: tool, Arguments: args}, out)
}

func callWith(t *testing.T, cs *sdk.ClientSession, p *sdk.CallToolParams, out any) string {
	t.Helper()
	res, err := cs.CallTool(bounded(t), p)
	if err != nil {
		t.Fatalf("%s: a protocol error, where a tool answer was due: %v", p.Name, err)
	}
	if res.IsError {
		if len(res.Content) == 0 {
			t.Fatalf("%s: a tool error without text", p.Name)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured answer %s: %v", p.Name, b, err)
		}
	}
	return ""
}

type runAnswer struct {
	ExecutionID   string  `json:"execution_id"`
	Status        string  `json:"status"`
	Cost          float64 `json:"cost_usdc"`
	ResultHash    *string `json:"result_hash"`
	IPFSURL       *string `json:"ipfs_url"`
	OnChainRecord string  `json:"on_chain_record"`
}

func TestMCPTools(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(150*time.Millisecond)), "0.25")
	progress := &progressLog{}
	cs := mcpSession(t, m.env, m.key, progress)

	var page struct {
		Agents []struct {
			AgentID string  `json:"agent_id"`
			Price   float64 `json:"price_per_call_usdc"`
		} `json:"agents"`
		Total int `json:"total"`
	}
	if msg := call(t, cs, "search_agents", map[string]any{"q": "words", "tags": []string{"writing"}, "limit": 5}, &page); msg != "" {
		t.Fatal(msg)
	}
	if page.Total != 1 || len(page.Agents) != 1 || page.Agents[0].AgentID != agent || page.Agents[0].Price != 0.25 {
		t.Errorf("search_agents = %+v", page)
	}
	var listing struct {
		AgentID     string          `json:"agent_id"`
		InputSchema json.RawMessage `json:"input_schema"`
		Environment string          `json:"environment"`
	}
	if msg := call(t, cs, "get_agent", map[string]any{"agent_id": agent}, &listing); msg != "" {
		t.Fatal(msg)
	}
	if listing.AgentID != agent || !strings.Contains(string(listing.InputSchema), `"lang"`) || listing.Environment != "devnet" {
		t.Errorf("get_agent = %+v", listing)
	}

	before := m.balance(m.callerW, crtx.Devnet)
	creatorBefore := m.balance(m.creatorW, crtx.Devnet)
	args := map[string]any{"agent_id": agent, "task": "count", "parameters": map[string]any{"lang": "en", "n": 1},
		"max_cost_usdc": 0.25, "idempotency_key": "mcp-run-1"}
	res, err := cs.CallTool(bounded(t), &sdk.CallToolParams{Name: "run_agent", Arguments: args, Meta: sdk.Meta{"progressToken": "run-1"}})
	if err != nil || res.IsError {
		t.Fatalf("run_agent: %v %+v", err, res)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; text != "slow count" {
		t.Errorf("result text = %q", text)
	}
	var run runAnswer
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &run)
	if run.Status != "completed" || run.Cost != 0.25 || run.ResultHash == nil || *run.ResultHash != crtx.ResultHash("slow count") ||
		run.IPFSURL == nil || !strings.Contains(run.OnChainRecord, "/explorer/account/") {
		t.Errorf("run_agent structured = %s", b)
	}
	// The client hands notifications to its handler on its own goroutine:
	// the last may land just after the answer.
	got := progress.all()
	for deadline := time.Now().Add(2 * time.Second); len(got) < 3 && time.Now().Before(deadline); got = progress.all() {
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 3 || !strings.Contains(got[0], "pending") || !strings.Contains(got[1], "running") || !strings.Contains(got[2], "completed") {
		t.Errorf("progress notifications = %q", got)
	}
	// The same idempotency key again: the first run, not a second charge.
	// The same idempotency key, the same arguments in another order.
	reordered := json.RawMessage(`{"idempotency_key":"mcp-run-1","max_cost_usdc":0.25,"parameters":{"n":1,"lang":"en"},"task":"count","agent_id":"` + agent + `"}`)
	res, err = cs.CallTool(bounded(t), &sdk.CallToolParams{Name: "run_agent", Arguments: reordered})
	if err != nil || res.IsError {
		t.Fatalf("run_agent again: %v %+v", err, res)
	}
	var again runAnswer
	b, _ = json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &again)
	if again.ExecutionID != run.ExecutionID || res.Content[0].(*sdk.TextContent).Text != "slow count" {
		t.Errorf("replay: execution %s (want %s), text %q", again.ExecutionID, run.ExecutionID, res.Content[0].(*sdk.TextContent).Text)
	}
	if after := m.balance(m.callerW, crtx.Devnet); before.Available-after.Available != usdc("0.25") || after.Escrowed != 0 {
		t.Errorf("charged %s (escrow %s), want 0.25 once", before.Available-after.Available, after.Escrowed)
	}
	m.rollup()
	if got := m.balance(m.creatorW, crtx.Devnet).Available - creatorBefore.Available; got <= 0 || got >= usdc("0.25") {
		t.Errorf("creator credited %s, want the price less the fee", got)
	}

	var rec struct {
		ExecutionID string `json:"execution_id"`
		Status      string `json:"status"`
		Result      string `json:"result"`
	}
	if msg := call(t, cs, "get_execution", map[string]any{"execution_id": run.ExecutionID}, &rec); msg != "" ||
		rec.Status != "completed" || rec.Result != "slow count" {
		t.Errorf("get_execution = %q %+v", msg, rec)
	}
	var report client.VerifyReport
	if msg := call(t, cs, "verify_execution", map[string]any{"execution_id": run.ExecutionID}, &report); msg != "" || !report.OK() || len(report.Checks) < 5 {
		t.Errorf("verify_execution = %q %+v", msg, report)
	}
	// A mainnet key sees neither the devnet agent's runs nor its executions.
	live := mcpSession(t, m.env, m.liveKey, nil)
	if msg := call(t, live, "get_execution", map[string]any{"execution_id": run.ExecutionID}, nil); !strings.HasPrefix(msg, "execution_not_found: ") {
		t.Errorf("another environment's execution: %q", msg)
	}
}

func TestMCPErrors(t *testing.T) {
	m := newMarket(t, "1")
	agent := m.list(newService(t, echo), "0.5")
	failing := m.list(newService(t, func(context.Context, creator.Request) (string, int, error) {
		return "", 0, io.ErrUnexpectedEOF
	}), "0.5")
	paused := m.list(newService(t, echo), "0.1")
	if _, err := patch(m.creatorC, paused, map[string]any{"status": "paused"}); err != nil {
		t.Fatal(err)
	}
	down := newService(t, echo)
	gone := m.list(down, "0.5")
	closeService(t, down)
	cs := mcpSession(t, m.env, m.key, nil)
	before := m.balance(m.callerW, crtx.Devnet)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"agent_id": paused, "task": "x"}, "agent_paused: "},
		{map[string]any{"agent_id": crtx.NewUUID(), "task": "x"}, "agent_not_found: "},
		{map[string]any{"agent_id": agent, "task": "x", "max_cost_usdc": 0.1}, "price_changed: "},
		{map[string]any{"agent_id": agent, "task": "x", "parameters": map[string]any{"lang": 7}}, "invalid_request: "},
		{map[string]any{"agent_id": failing, "task": "x"}, "execution_failed: "},
		{map[string]any{"agent_id": gone, "task": "x"}, "agent_unreachable: "},
	} {
		if msg := call(t, cs, "run_agent", c.args, nil); !strings.HasPrefix(msg, c.want) {
			t.Errorf("run_agent %v: %q, want %s…", c.args, msg, c.want)
		}
	}
	// The SDK refuses arguments outside the schema before anything runs.
	if msg := call(t, cs, "run_agent", map[string]any{"agent_id": agent}, nil); msg == "" {
		t.Error("run_agent without a task answered")
	}
	if msg := call(t, cs, "search_agents", map[string]any{"sort": "cheapest"}, nil); msg == "" {
		t.Error("search_agents with an unknown sort answered")
	}
	if after := m.balance(m.callerW, crtx.Devnet); after != before {
		t.Errorf("refusals and a failed run moved money: %+v, was %+v", after, before)
	}
	// Spending it all leaves too little for one more call.
	m.ran(t, m.key, agent)
	m.ran(t, m.key, agent)
	if msg := call(t, cs, "run_agent", map[string]any{"agent_id": agent, "task": "x"}, nil); !strings.HasPrefix(msg, "insufficient_balance: ") {
		t.Errorf("broke: %q", msg)
	}

	// No key, a bad key: a 401 with the challenge and the REST error body.
	for _, auth := range []string{"", "Bearer crtx_test_nope", "Bearer " + m.callerC.Token()} {
		req, _ := http.NewRequest("POST", m.d.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") || !strings.Contains(string(body), `"code":`) {
			t.Errorf("auth %q: %d %q %s", auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	// Behind a reverse proxy on the same machine, requests reach the
	// loopback socket with the public Host: they are served.
	req, _ := http.NewRequest("POST", m.d.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Host = "crtx.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+m.key.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a proxied request: %s", resp.Status)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, nil)
	if _, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: m.d.URL + "/mcp", MaxRetries: -1}, nil); err == nil {
		t.Error("an MCP client connected without a key")
	}
}

// A call cancelled by its client while the execution is still pending
// cancels the execution and refunds it.
func TestMCPCancel(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	agent := m.list(newService(t, slow(600*time.Millisecond)), "1")
	busy := m.occupy(agent)
	progress := &progressLog{}
	cs := mcpSession(t, m.env, m.key, progress)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent_id": agent, "task": "waiting"},
			Meta: sdk.Meta{"progressToken": 7}})
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); len(progress.all()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no progress notification for the pending execution")
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call answered")
	}
	if _, err := m.key.Wait(bounded(t), busy.ExecutionID, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	page, err := m.key.Executions(ctx, url.Values{"status": {"failed"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Executions) != 1 {
		t.Fatalf("failed executions = %+v, want the cancelled one", page.Executions)
	}
	rec, err := m.key.Execution(ctx, page.Executions[0].ExecutionID)
	if err != nil || rec.Error == nil || rec.Error.Code != "cancelled" {
		t.Errorf("the cancelled call's execution = %+v %v", rec, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("9") {
		t.Errorf("balance %+v, want only the busy run paid", b)
	}
}

// A key's spend limit, in-flight limit and revocation hold on MCP as on REST.
func TestMCPLimits(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxInFlightPerKey = 1 })
	agent := m.list(newService(t, slow(400*time.Millisecond)), "0.5")
	limit := usdc("0.7")
	k, err := m.callerC.CreateKey(ctx, client.KeyParams{Name: "capped", Environment: crtx.Devnet, SpendLimit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	runLogs.secret(k.Key)
	capped := m.anon.WithToken(k.Key)
	cs := mcpSession(t, m.env, capped, nil)
	if msg := call(t, cs, "run_agent", map[string]any{"agent_id": agent, "task": "one"}, nil); msg != "" {
		t.Fatal(msg)
	}
	if msg := call(t, cs, "run_agent", map[string]any{"agent_id": agent, "task": "two"}, nil); !strings.HasPrefix(msg, "spend_limit_exceeded: ") {
		t.Errorf("past the spend limit: %q", msg)
	}

	// One execution in flight on REST takes the key's only slot.
	other := mcpSession(t, m.env, m.key, nil)
	running := make(chan error, 1)
	go func() {
		_, err := m.key.Execute(ctx, agent, run("rest"), client.ExecuteOptions{})
		running <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if msg := call(t, other, "run_agent", map[string]any{"agent_id": agent, "task": "mcp"}, nil); !strings.HasPrefix(msg, "rate_limited: ") {
		t.Errorf("a second execution in flight: %q", msg)
	}
	if err := <-running; err != nil {
		t.Fatal(err)
	}

	// A revoked key's session is refused at its next request.
	if _, err := m.callerC.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(bounded(t), &sdk.CallToolParams{Name: "get_agent", Arguments: map[string]any{"agent_id": agent}}); err == nil {
		t.Error("a revoked key's session still answers")
	}
}

// run_agent's progress says running while the execution runs: the agent
// answers only once the client has been told so, and a run that was never
// reported running times out instead.
func TestMCPProgressRunning(t *testing.T) {
	m := newMarket(t, "10")
	told := make(chan struct{})
	var once sync.Once
	agent := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			select {
			case <-told:
			case <-ctx.Done():
				return "", 0, ctx.Err()
			}
		}
		return "ran " + r.Task, 0, nil
	}), "0.25", map[string]any{"timeout_seconds": 5})
	progress := &progressLog{}
	c := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, r *sdk.ProgressNotificationClientRequest) {
			progress.add(ctx, r)
			if strings.HasSuffix(r.Params.Message, " is running") {
				once.Do(func() { close(told) })
			}
		}})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: m.d.URL + "/mcp",
		HTTPClient: &http.Client{Transport: withKey{m.key.Token()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(bounded(t), &sdk.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent_id": agent, "task": "x"},
		Meta: sdk.Meta{"progressToken": "p"}})
	if err != nil || res.IsError {
		t.Fatalf("run_agent: %v %+v; progress %q", err, res, progress.all())
	}
	got := progress.all()
	for deadline := time.Now().Add(2 * time.Second); len(got) < 3 && time.Now().Before(deadline); got = progress.all() {
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 3 || !strings.HasSuffix(got[0], " is pending") || !strings.HasSuffix(got[1], " is running") || !strings.HasSuffix(got[2], " is completed") {
		t.Errorf("progress notifications = %q", got)
	}
}
