package market

import (
	"bytes"
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/crtx-market/crtx/x402"
)

// embedded is an agent's schema raw made to stand at the pointer at in the
// bazaar extension's schema (x402.EmbedSchema), and the schema compiled as
// it will be read there; ok is false when it cannot, and a pointer to the
// listing stands there instead.
func (m *core) embedded(raw json.RawMessage, at string) (v any, sch *jsonschema.Schema, ok bool) {
	v, alone, ok := x402.EmbedSchema(raw, at)
	if !ok {
		return nil, nil, false
	}
	// Compiled without its $schema, as draft 2020-12, and cached by the
	// bytes as every input schema is.
	sch, err := m.compiled(alone)
	if err != nil {
		return nil, nil, false
	}
	return v, sch, true
}

// exampleParameters is parameters an agent takes, for the example body:
// its input schema's first example, else one made of its properties'
// examples, defaults, consts or first values; nil when neither is an
// object that sch accepts.
func exampleParameters(raw json.RawMessage, sch *jsonschema.Schema) json.RawMessage {
	var s struct {
		Examples   []json.RawMessage `json:"examples"`
		Properties map[string]struct {
			Examples []json.RawMessage `json:"examples"`
			Default  json.RawMessage   `json:"default"`
			Const    json.RawMessage   `json:"const"`
			Enum     []json.RawMessage `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var candidates []json.RawMessage
	if len(s.Examples) > 0 {
		candidates = append(candidates, s.Examples[0])
	}
	made := map[string]json.RawMessage{}
	for name, p := range s.Properties {
		switch {
		case len(p.Examples) > 0:
			made[name] = p.Examples[0]
		case len(p.Default) > 0:
			made[name] = p.Default
		case len(p.Const) > 0:
			made[name] = p.Const
		case len(p.Enum) > 0:
			made[name] = p.Enum[0]
		}
	}
	if b, err := json.Marshal(made); err == nil && len(made) > 0 {
		candidates = append(candidates, b)
	}
	for _, c := range candidates {
		c = compactJSON(c)
		if bytes.HasPrefix(c, []byte("{")) && validate(sch, c) == nil {
			return c
		}
	}
	return nil
}
