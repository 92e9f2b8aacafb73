package http_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
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

// mcpPost POSTs a JSON-RPC body to /mcp as an MCP client of protocol
// 2025-03-26 would, with key and session (empty to open one), and returns
// the status, the session id the answer names, and the responses it
// streamed.
func mcpPost(t *testing.T, e *env, key, session, body string) (int, string, []rpcAnswer) {
	t.Helper()
	req, _ := http.NewRequestWithContext(bounded(t), "POST", e.d.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []rpcAnswer
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || len(data) == 0 {
			continue
		}
		var one []rpcAnswer
		if data[0] != '[' {
			data = append(append([]byte("["), data...), ']')
		}
		if err := json.Unmarshal(data, &one); err != nil {
			t.Fatalf("answer %s: %v", data, err)
		}
		out = append(out, one...)
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), out
}

const mcpInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// mcpOpen opens an MCP session for key and returns its id.
func mcpOpen(t *testing.T, e *env, key string) string {
	t.Helper()
	status, session, answers := mcpPost(t, e, key, "", mcpInitialize)
	if status != 200 || session == "" || len(answers) != 1 || answers[0].Error != nil {
		t.Fatalf("initialize: %d, session %q, %+v", status, session, answers)
	}
	return session
}

// Each call of a JSON-RPC batch counts against the key's rate limit, as
// that many REST requests would: of a batch of run_agent calls made with
// the limit spent, no more than the bucket's burst run, and the others are
// refused, each alone, as rate_limited, without charge.
func TestMCPBatchRateLimit(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.RateLimitKey = 1 }) // a burst of 2
	agent := m.list(newService(t, echo), "0.05")
	before := m.balance(m.callerW, crtx.Devnet)
	session := mcpOpen(t, m.env, m.key.Token()) // one of the burst
	const n = 20
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent_id":%q,"task":"x"}}}`, i+1, agent)
	}
	status, _, answers := mcpPost(t, m.env, m.key.Token(), session, "["+strings.Join(calls, ",")+"]")
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
