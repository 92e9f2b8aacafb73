package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// A NUL character (U+0000) is refused alike at the three doors, REST, MCP
// and A2A, in the task, the parameters, the idempotency key and the ids a
// call names, as invalid_request: no door stores it on SQLite while
// PostgreSQL, which cannot hold it, answers 500. Nothing is charged.
func TestNULAtEveryDoor(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.5")
	before := m.balance(m.callerW, crtx.Devnet)

	// REST.
	for _, p := range []crtx.ExecuteParams{
		{Task: "a\x00b"},
		{Task: "x", Parameters: json.RawMessage(`{"lang":"e\u0000n"}`)},
	} {
		_, err := m.key.Execute(ctx, agent, p, client.ExecuteOptions{})
		wantCode(t, err, 400, "invalid_request")
	}

	// MCP.
	cs := mcpSession(t, m.env, m.key, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"run_agent", map[string]any{"agent_id": agent, "task": "a\x00b"}},
		{"run_agent", map[string]any{"agent_id": agent, "task": "x", "idempotency_key": "k\x00"}},
		{"run_agent", map[string]any{"agent_id": agent, "task": "x", "parameters": map[string]any{"lang": "e\x00n"}}},
		{"run_agent", map[string]any{"agent_id": agent + "\x00", "task": "x"}},
		{"get_agent", map[string]any{"agent_id": agent + "\x00"}},
		{"get_execution", map[string]any{"execution_id": "\x00"}},
		{"search_agents", map[string]any{"q": "words\x00"}},
	} {
		if msg := call(t, cs, c.tool, c.args, nil); !strings.HasPrefix(msg, "invalid_request: ") {
			t.Errorf("%s %q: %q, want invalid_request", c.tool, c.args, msg)
		}
	}
	// The session is still good for text.
	if msg := call(t, cs, "get_agent", map[string]any{"agent_id": agent}, nil); msg != "" {
		t.Errorf("get_agent after the refusals: %s", msg)
	}

	// A2A.
	a := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	_, err := a.send(userMessage(a2a.NewTextPart("a\x00b")), false)
	wantA2A(t, err, a2a.ErrInvalidParams, "invalid_request")
	_, err = a.send(userMessage(a2a.NewTextPart("x"), a2a.NewDataPart(map[string]any{"lang": "e\x00n"})), false)
	wantA2A(t, err, a2a.ErrInvalidParams, "invalid_request")
	id := userMessage(a2a.NewTextPart("x"))
	id.ID = "m\x00"
	_, err = a.send(id, false)
	wantA2A(t, err, a2a.ErrInvalidParams, "invalid_request")

	if after := m.balance(m.callerW, crtx.Devnet); after != before {
		t.Errorf("refusals moved money: %+v, was %+v", after, before)
	}
	page, err := m.key.Executions(ctx, nil)
	if err != nil || len(page.Executions) != 0 {
		t.Errorf("executions = %+v, %v; want none", page, err)
	}
}
