package market

import (
	"encoding/json"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// The bazaar extension (x402's specs/extensions/bazaar.md) tells a buyer
// how to call a resource. An agent is called by POSTing the execute body in
// JSON: its parameters are what the agent's input schema describes, and
// the answer is an execution record whose result the output schema
// describes. The schema is laid out as @x402/extensions' own
// declareDiscoveryExtension lays out a body method's, so that clients find
// the input schema under input.body and the output's under output.example.

// Where the agent's schemas stand in the extension's schema: their own
// references are rewritten to these places.
const (
	bazaarParametersAt = "#/properties/input/properties/body/properties/parameters"
	bazaarOutputAt     = "#/properties/output/properties/example"
)

// exampleTask is the task of the example body: a listing has no example of
// its own, and any non-empty text is a task the marketplace takes.
const exampleTask = "The task for this agent, in words"

// bazaar is the bazaar extension of an agent.
func (m *core) bazaar(a crtx.Agent) (api.Bazaar, error) {
	parameters, sch, ok := m.embedded(a.InputSchema, bazaarParametersAt)
	if !ok {
		parameters = map[string]any{"type": "object", "description": "the agent's input_schema, at GET /v1/agents/" + a.ID}
		// The example is still one the marketplace takes.
		if sch, _ = m.compiled(a.InputSchema); sch == nil {
			return api.Bazaar{}, fmt.Errorf("agent %s: its input schema does not compile", a.ID)
		}
	}
	output, _, ok := m.embedded(a.OutputSchema, bazaarOutputAt)
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
	schema := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": []string{"input"},
		"properties": map[string]any{
			"input": map[string]any{
				"type": "object", "required": []string{"type", "method", "bodyType", "body"}, "additionalProperties": false,
				"properties": map[string]any{
					"type":     map[string]any{"type": "string", "const": "http"},
					"method":   map[string]any{"type": "string", "enum": []string{"POST"}},
					"bodyType": map[string]any{"type": "string", "enum": []string{"json"}},
					"body":     input,
				},
			},
			"output": map[string]any{
				"type": "object", "required": []string{"type"},
				"properties": map[string]any{
					"type":    map[string]any{"type": "string"},
					"format":  map[string]any{"type": "string"},
					"example": output,
				},
			},
		},
	}
	rawBody, err := json.Marshal(body)
	if err != nil {
		return api.Bazaar{}, err
	}
	rawSchema, err := json.Marshal(schema)
	if err != nil {
		return api.Bazaar{}, err
	}
	return api.Bazaar{
		Info: api.BazaarInfo{
			Input: api.BazaarInput{Type: "http", Method: "POST", BodyType: "json", Body: rawBody},
			Output: api.BazaarOutput{Type: "json",
				Format: "a crtx execution record; its result holds the agent's answer, which the schema of output.example describes"},
		},
		Schema: rawSchema,
	}, nil
}
