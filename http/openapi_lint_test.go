package http_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// openapi.json is meant to be taken as is by validators (Prism, Redocly)
// and generators (openapi-typescript). TestOpenAPIOperationIDs checks that
// every operation has its own operationId; these tests keep out the rest of
// what such tools get wrong.

// TestOpenAPIPortableSchemas walks every schema of the document:
//   - no multipleOf: 0.000001 is not exact in binary floating point, so
//     validators refuse amounts such as 0.05; the 6 decimals of an amount are
//     stated in its description instead.
//   - an object schema without properties (parameters, input_schema,
//     evidence) says additionalProperties: true, or generators type it as an
//     object that can hold nothing (Record<string, never>).
func TestOpenAPIPortableSchemas(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	schemas := 0
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(where, x)
			}
		case map[string]any:
			if _, ok := v["multipleOf"].(float64); ok {
				t.Errorf("%s has multipleOf; state the precision in its description", where)
			}
			if isObject(v["type"]) {
				schemas++
				_, composed := v["allOf"]
				if v["properties"] == nil && !composed && v["additionalProperties"] != true {
					if _, typed := v["additionalProperties"].(map[string]any); !typed {
						t.Errorf("%s is a free-form object without \"additionalProperties\": true", where)
					}
				}
			}
			for k, x := range v {
				switch k {
				case "example", "examples", "default", "enum", "const":
					// values, not schemas
				default:
					walk(where+"/"+pointerEscape.Replace(k), x)
				}
			}
		}
	}
	walk("#", doc)
	if schemas < 20 {
		t.Errorf("found only %d object schemas in openapi.json", schemas)
	}
}

// pointerEscape writes a key as a JSON Pointer token.
var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

func isObject(typ any) bool {
	switch typ := typ.(type) {
	case string:
		return typ == "object"
	case []any:
		return slices.Contains(typ, any("object"))
	}
	return false
}

// A request field is required in openapi.json only if the server refuses a
// request without it, and has no default there: openapi-typescript makes a
// field with a default required (its defaultNonNullable), so a default is
// told in the description instead.
func TestOpenAPIOptionalRequestFields(t *testing.T) {
	found := false
	for _, o := range operations(t) {
		if o.op.RequestBody == nil {
			continue
		}
		media := o.op.RequestBody.Value.Content.Get("application/json")
		if media == nil || media.Schema == nil {
			continue
		}
		s := media.Schema.Value
		for name, p := range s.Properties {
			if p.Value.Default != nil {
				t.Errorf("%s request: %s has a default, which generators make a required field", o.where, name)
			}
		}
		if o.op.OperationID == "executeAgent" {
			found = true
			if !slices.Equal(s.Required, []string{"task"}) {
				t.Errorf("%s request requires %v; the server requires only task", o.where, s.Required)
			}
		}
	}
	if !found {
		t.Error("openapi.json has no executeAgent operation")
	}
}
