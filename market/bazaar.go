package market

import (
	"encoding/json"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/x402"
)

// An agent is called by POSTing the execute body in JSON (x402.PostJSON):
// its parameters are what the agent's input schema describes, and the
// answer is an execution record whose result the output schema describes.

// bazaarParametersAt is where the agent's input schema stands in the
// extension's schema: its own references are rewritten to it.
const bazaarParametersAt = x402.BazaarBodyAt + "/properties/parameters"

// exampleTask is the task of the example body: a listing has no example of
// its own, and any non-empty text is a task the marketplace takes.
const exampleTask = "The task for this agent, in words"

// bazaar is the bazaar extension of an agent.
func (m *core) bazaar(a crtx.Agent) (x402.Bazaar, error) {
	parameters, sch, ok := m.embedded(a.InputSchema, bazaarParametersAt)
	if !ok {
		parameters = map[string]any{"type": "object", "description": "the agent's input_schema, at GET /v1/agents/" + a.ID}
		// The example is still one the marketplace takes.
		if sch, _ = m.compiled(a.InputSchema); sch == nil {
			return x402.Bazaar{}, fmt.Errorf("agent %s: its input schema does not compile", a.ID)
		}
	}
	output, _, ok := m.embedded(a.OutputSchema, x402.BazaarOutputAt)
	if !ok {
		output = map[string]any{"description": "the agent's output_schema, at GET /v1/agents/" + a.ID}
	}
	body := struct {
		Task       string          `json:"task"`
		Parameters json.RawMessage `json:"parameters,omitempty"`
	}{exampleTask, exampleParameters(a.InputSchema, sch)}
	input := map[string]any{
		"type": "object", "required": []string{"task"}, "additionalProperties": false,
		"properties": map[string]any{
			"task": map[string]any{"type": "string", "minLength": 1, "maxLength": crtx.MaxTaskBytes,
				"description": "what the agent is to do, in words"},
			"parameters": parameters,
			"async": map[string]any{"type": "boolean",
				"description": "true: answered 202 at once, the result read later at GET /v1/executions/{execution_id}"},
			"private":         map[string]any{"type": "boolean", "description": "true: the result is not published by its content id"},
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": a.TimeoutSeconds},
			"max_cost_usdc":   map[string]any{"type": "number", "minimum": 0, "description": "refuse the call, uncharged, above this price"},
			"webhook_url":     map[string]any{"type": "string", "description": "where the finished execution record is POSTed"},
		},
	}
	rawBody, err := json.Marshal(body)
	if err != nil {
		return x402.Bazaar{}, err
	}
	return x402.PostJSON(rawBody, input, output,
		"a crtx execution record; its result holds the agent's answer, which the schema of output.example describes")
}
