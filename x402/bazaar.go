package x402

import "encoding/json"

// The bazaar extension (specs/extensions/bazaar.md) tells a buyer how to
// call a resource, and x402's discovery list (x402-specification-v2.md §8,
// "Bazaars") carries it. Its schema is laid out as @x402/extensions' own
// declareDiscoveryExtension lays out a body method's, so that clients find
// the body's schema under input.body and the output's under
// output.example.

// ResourceType is the one x402 resource type crtx lists: HTTP endpoints.
const ResourceType = "http"

// BazaarKey is the bazaar extension's key in a resource's extensions.
const BazaarKey = "bazaar"

// Where the body's and the output's schemas stand in the extension's
// schema: references inside them are rewritten to these places
// (EmbedSchema).
const (
	BazaarBodyAt   = "#/properties/input/properties/body"
	BazaarOutputAt = "#/properties/output/properties/example"
)

// Bazaar is the bazaar extension (specs/extensions/bazaar.md): how to call
// the resource (Info), and the JSON Schema Info satisfies.
type Bazaar struct {
	Info   BazaarInfo      `json:"info"`
	Schema json.RawMessage `json:"schema"`
}

// BazaarInfo describes an HTTP call with a JSON body.
type BazaarInfo struct {
	Input  BazaarInput  `json:"input"`
	Output BazaarOutput `json:"output"`
}

// BazaarInput is the request: Body is an example body.
type BazaarInput struct {
	Type     string          `json:"type"`
	Method   string          `json:"method"`
	BodyType string          `json:"bodyType"`
	Body     json.RawMessage `json:"body"`
}

// BazaarOutput is the response's content type, and what it holds in words.
type BazaarOutput struct {
	Type   string `json:"type"`
	Format string `json:"format,omitempty"`
}

// PostJSON is the bazaar extension of a resource called by POSTing a JSON
// body: example is a body it takes, bodySchema the schema of every body
// (standing at BazaarBodyAt), output the schema of what it answers
// (standing at BazaarOutputAt) and format that answer in words.
func PostJSON(example json.RawMessage, bodySchema, output any, format string) (Bazaar, error) {
	schema := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": []string{"input"},
		"properties": map[string]any{
			"input": map[string]any{
				"type": "object", "required": []string{"type", "method", "bodyType", "body"}, "additionalProperties": false,
				"properties": map[string]any{
					"type":     map[string]any{"type": "string", "const": "http"},
					"method":   map[string]any{"type": "string", "enum": []string{"POST"}},
					"bodyType": map[string]any{"type": "string", "enum": []string{"json"}},
					"body":     bodySchema,
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
	rawSchema, err := json.Marshal(schema)
	if err != nil {
		return Bazaar{}, err
	}
	return Bazaar{
		Info: BazaarInfo{
			Input:  BazaarInput{Type: "http", Method: "POST", BodyType: "json", Body: example},
			Output: BazaarOutput{Type: "json", Format: format},
		},
		Schema: rawSchema,
	}, nil
}
