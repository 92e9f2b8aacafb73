package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// Every tool's input and output schema is a JSON object all the way down,
// as the official TypeScript SDK requires of every property schema before
// it accepts a tool list (and the Python SDK's models of a schema are
// dicts): a subschema written as the boolean true or false is refused.
func TestMCPToolSchemasAreObjects(t *testing.T) {
	m := newMarket(t, "0")
	cs := mcpSession(t, m.env, m.key, nil)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) == 0 {
		t.Fatal("no tools")
	}
	for _, tl := range tools.Tools {
		for side, s := range map[string]any{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			root, ok := s.(map[string]any)
			if !ok || root["type"] != "object" {
				t.Errorf("%s %s: %v, want an object schema of type object", tl.Name, side, s)
				continue
			}
			for _, p := range nonObjects(s, tl.Name+"."+side) {
				t.Errorf("%s is not a schema object", p)
			}
			// A nullable value is anyOf, not a type array, which some
			// model providers refuse.
			if b, _ := json.Marshal(s); bytes.Contains(b, []byte(`"type":[`)) {
				t.Errorf("%s %s has a type array: %s", tl.Name, side, b)
			} else if !bytes.Contains(b, []byte(`{"type":"null"}`)) && side == "outputSchema" && tl.Name == "get_execution" {
				t.Errorf("get_execution's output schema has no nullable field written as anyOf: %s", b)
			}
		}
	}
}

// nonObjects lists the paths of the schemas under s, s included, that are
// not JSON objects. It knows the keywords that hold schemas, so that the
// values of enum, const, default or examples are not taken for schemas.
func nonObjects(s any, path string) []string {
	obj, ok := s.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s (%v)", path, s)}
	}
	var out []string
	for k, v := range obj {
		switch k {
		case "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames",
			"unevaluatedItems", "unevaluatedProperties", "contentSchema":
			out = append(out, nonObjects(v, path+"."+k)...)
		case "items":
			if list, ok := v.([]any); ok {
				for i, sub := range list {
					out = append(out, nonObjects(sub, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
				}
			} else {
				out = append(out, nonObjects(v, path+"."+k)...)
			}
		case "allOf", "anyOf", "oneOf", "prefixItems":
			list, _ := v.([]any)
			for i, sub := range list {
				out = append(out, nonObjects(sub, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
			}
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			subs, _ := v.(map[string]any)
			for name, sub := range subs {
				out = append(out, nonObjects(sub, path+"."+k+"."+name)...)
			}
		}
	}
	return out
}
