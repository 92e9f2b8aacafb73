package market

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// An agent's schemas stand inside the bazaar extension's schema, which
// clients compile as one draft 2020-12 document: @x402/extensions' own
// validator (Ajv) refuses the whole extension if any $id or $ref leads
// outside it, and resolves "#/…" from the extension's root, not the
// agent's schema. So the agent's $schema and $id go, its local references
// are rewritten to where the schema now stands, and a schema that still
// cannot stand there (a reference outside itself, an older draft's form
// that 2020-12 refuses) is replaced by a pointer to the listing.

// embedded is an agent's schema raw made to stand at the pointer at, and
// the schema compiled as it will be read there; ok is false when it cannot.
func (m *core) embedded(raw json.RawMessage, at string) (v any, sch *jsonschema.Schema, ok bool) {
	v, alone, ok := embedSchema(raw, at)
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

// embedSchema is raw without its $schema and $id, its local references
// rewritten to stand at the pointer at; alone is the same schema with its
// references as they were, to compile by itself. ok is false when a
// reference or $id would still lead outside the document.
func embedSchema(raw json.RawMessage, at string) (v any, alone json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, false
	}
	if obj, isObj := v.(map[string]any); isObj {
		delete(obj, "$schema")
		delete(obj, "$id")
	}
	alone, err := json.Marshal(v)
	if err != nil {
		return nil, nil, false
	}
	rewriteRefs(v, at)
	return v, alone, !external(v)
}

// rewriteRefs prefixes every "#" and "#/…" $ref of schema v with at,
// leaving instances (const, enum, default, examples) as they are.
func rewriteRefs(v any, at string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "$ref":
				if ref, ok := x.(string); ok && (ref == "#" || strings.HasPrefix(ref, "#/")) {
					v[k] = at + ref[1:]
				}
			case "const", "enum", "default", "examples", "example":
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				// Names, each of a schema.
				if named, ok := x.(map[string]any); ok {
					for _, s := range named {
						rewriteRefs(s, at)
					}
				}
			default:
				rewriteRefs(x, at)
			}
		}
	case []any:
		for _, x := range v {
			rewriteRefs(x, at)
		}
	}
}

// external reports what @x402/extensions' validator refuses: a $ref or
// $id anywhere in v, instances included, that is not a string starting
// with "#".
func external(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); (k == "$ref" || k == "$id") && (!ok || !strings.HasPrefix(s, "#")) {
				return true
			}
			if external(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if external(x) {
				return true
			}
		}
	}
	return false
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
