package mcp

import (
	"encoding/json"
	"reflect"
	"slices"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemaFor infers a tool's JSON Schema from its Go type, told how the
// types with their own JSON encoding look on the wire: amounts are decimal
// numbers of USDC (not the int64 of micro-USDC inside), times RFC 3339
// strings, raw JSON any value.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[crtx.USDC]():       {Type: "number", Description: "USDC, up to 6 decimals"},
		reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic(err) // the tools' types are this package's own: a test runs every one
	}
	return s
}

// property returns the schema of one property, to add what struct tags
// cannot say (enums, bounds).
func property(s *jsonschema.Schema, name string) *jsonschema.Schema { return s.Properties[name] }

func ptr[T any](v T) *T { return &v }

// addTool registers a tool whose schemas are jsonschema trees, sending
// them as objects all the way down. The jsonschema package writes the
// empty schema as true and a struct's closed additionalProperties as
// false; JSON Schema allows that, but the official TypeScript SDK refuses
// a whole tool list whose property schemas are not objects, and most MCP
// hosts are built on it. The SDK still validates with the same schemas:
// it reads {} and {"not": {}} back as true and false.
func addTool[In, Out any](srv *sdk.Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	t.InputSchema, t.OutputSchema = objects(t.InputSchema.(*jsonschema.Schema)), objects(t.OutputSchema.(*jsonschema.Schema))
	sdk.AddTool(srv, t, h)
}

// objects is s in JSON, with every boolean subschema written as the object
// that means the same: true as {}, false as {"not": {}}.
func objects(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // as in schemaFor
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		panic(err)
	}
	if b, err = json.Marshal(asObject(v)); err != nil {
		panic(err)
	}
	return b
}

// The keywords whose values are schemas (JSON Schema 2020-12 and draft 7),
// by what holds them: one schema, an array of them, or an object of them.
// Other keywords (enum, const, default, examples, required…) hold values,
// whose booleans stay booleans.
var (
	oneSchema = []string{"additionalProperties", "items", "additionalItems", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaArrays = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMaps   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// asObject rewrites the schema v and its subschemas in place.
func asObject(v any) any {
	switch s := v.(type) {
	case bool:
		if s {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	case map[string]any:
		for _, k := range oneSchema {
			if sub, ok := s[k]; ok {
				if _, isArray := sub.([]any); !isArray {
					s[k] = asObject(sub)
				}
			}
		}
		for _, k := range schemaArrays {
			if subs, ok := s[k].([]any); ok {
				for i := range subs {
					subs[i] = asObject(subs[i])
				}
			}
		}
		for _, k := range schemaMaps {
			if subs, ok := s[k].(map[string]any); ok {
				for name, sub := range subs {
					if _, names := sub.([]any); !names { // dependencies may list property names
						subs[name] = asObject(sub)
					}
				}
			}
		}
		return nullable(s)
	}
	return v
}

// nullable writes a schema of type [X, "null"] (a Go pointer's) as
// {"anyOf": [{"type": X, …}, {"type": "null"}]}: the array form is valid
// JSON Schema, but some hosts' model providers refuse it in a tool's
// schema, and the MCP Inspector warns of it. Its title and description
// stay outside, on the whole.
func nullable(s map[string]any) map[string]any {
	types, ok := s["type"].([]any)
	if !ok || len(types) != 2 || !slices.Contains(types, any("null")) {
		return s
	}
	other := types[0]
	if other == "null" {
		other = types[1]
	}
	outer := map[string]any{}
	for _, k := range []string{"title", "description"} {
		if v, ok := s[k]; ok {
			outer[k] = v
			delete(s, k)
		}
	}
	s["type"] = other
	outer["anyOf"] = []any{s, map[string]any{"type": "null"}}
	return outer
}
