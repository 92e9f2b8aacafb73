package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// A parameter the input schema does not declare is for the schema to
// decide, as JSON Schema has it: "additionalProperties": false refuses it
// before any money moves, naming it; a schema that does not say passes it
// through to the agent.
func TestUndeclaredParameters(t *testing.T) {
	m := newMarket(t, "1")
	got := make(chan string, 1)
	svc := newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if !r.Test { // listing checks the endpoint with calls of its own
			got <- string(r.Parameters)
		}
		return "ok", 1, nil
	})
	closed := m.list(svc, "0.01", map[string]any{"input_schema": json.RawMessage(
		`{"type":"object","properties":{"top":{"type":"integer"}},"additionalProperties":false}`)})
	open := m.list(svc, "0.01", map[string]any{"input_schema": json.RawMessage(
		`{"type":"object","properties":{"top":{"type":"integer"}}}`)})
	params := crtx.ExecuteParams{Task: "x", Parameters: json.RawMessage(`{"top":3,"lang":"en"}`)}

	before := m.balance(m.callerW, crtx.Devnet)
	_, err := m.key.Execute(ctx, closed, params, client.ExecuteOptions{})
	if ce := wantCode(t, err, 400, "invalid_request"); ce != nil && !strings.Contains(ce.Message, "lang") {
		t.Errorf("refusal %q does not name the parameter", ce.Message)
	}
	if after := m.balance(m.callerW, crtx.Devnet); after != before {
		t.Errorf("a refused parameter moved money: %+v, then %+v", before, after)
	}
	if _, err := m.key.Execute(ctx, closed, crtx.ExecuteParams{Task: "x", Parameters: json.RawMessage(`{"top":3}`)}, client.ExecuteOptions{}); err != nil {
		t.Fatalf("declared parameters: %v", err)
	}
	<-got

	rec, err := m.key.Execute(ctx, open, params, client.ExecuteOptions{})
	if err != nil || rec.Status != "completed" {
		t.Fatalf("a schema without additionalProperties: %+v, %v", rec.Status, err)
	}
	var passed map[string]any
	if err := json.Unmarshal([]byte(<-got), &passed); err != nil || passed["lang"] != "en" {
		t.Errorf("the agent got %v (%v), not the undeclared lang", passed, err)
	}
}
