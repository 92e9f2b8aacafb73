package http_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
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

// Generators name a client's arguments after the path parameters, so each
// is named as the wire names the value it carries, never a bare "id":
//   - a parameter after a collection is that collection's item id, named
//     <item>_id (executions/{execution_id}, keys/{key_id});
//   - any other parameter (environment, wallet, address, height) is the name
//     of a member of the operation's response, at any depth.
//
// /ipfs/{cid} keeps the name every IPFS gateway gives it.
func TestOpenAPIPathParameterNames(t *testing.T) {
	checked := 0
	for _, o := range operations(t) {
		segments := strings.Split(strings.SplitN(o.where, " ", 2)[1], "/")
		for i, seg := range segments {
			name, isParam := strings.CutPrefix(seg, "{")
			if !isParam {
				continue
			}
			name = strings.TrimSuffix(name, "}")
			checked++
			switch {
			case name == "id":
				t.Errorf("%s: {id} names no resource; call it {%s_id}", o.where, strings.TrimSuffix(segments[i-1], "s"))
			case name == "cid" && segments[i-1] == "ipfs":
			case strings.HasSuffix(name, "_id"):
				if want := strings.TrimSuffix(segments[i-1], "s") + "_id"; name != want {
					t.Errorf("%s: {%s} follows %q, so is named {%s}", o.where, name, segments[i-1], want)
				}
			case !respondsWith(o.op, name):
				t.Errorf("%s: {%s} is neither <item>_id nor a member of the response", o.where, name)
			}
		}
	}
	if checked < 20 {
		t.Errorf("found only %d path parameters in openapi.json", checked)
	}
}

// respondsWith tells whether a success response of op has a member called
// name, at any depth.
func respondsWith(op *openapi3.Operation, name string) bool {
	seen := map[*openapi3.Schema]bool{}
	var has func(s *openapi3.SchemaRef) bool
	has = func(s *openapi3.SchemaRef) bool {
		if s == nil || s.Value == nil || seen[s.Value] {
			return false
		}
		seen[s.Value] = true
		v := s.Value
		if _, ok := v.Properties[name]; ok {
			return true
		}
		for _, p := range v.Properties {
			if has(p) {
				return true
			}
		}
		for _, group := range []openapi3.SchemaRefs{v.AllOf, v.OneOf, v.AnyOf} {
			for _, x := range group {
				if has(x) {
					return true
				}
			}
		}
		return has(v.Items)
	}
	for code, r := range op.Responses.Map() {
		if !strings.HasPrefix(code, "2") || r.Value == nil {
			continue
		}
		for _, media := range r.Value.Content {
			if has(media.Schema) {
				return true
			}
		}
	}
	return false
}
