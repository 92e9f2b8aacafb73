package web

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
)

// param is one parameter of an agent, as its input_schema describes it:
// a row of the agent page's table and a field of its try-it form.
type param struct {
	Name, Type, Description string
	Required                bool
	// Default and Choices are as the page shows them.
	Default string
	Choices []string
}

// inputSchema is what the pages read of an agent's input_schema.
type inputSchema struct {
	Properties map[string]struct {
		Type        any    `json:"type"`
		Description string `json:"description"`
		Default     any    `json:"default"`
		Enum        []any  `json:"enum"`
		Examples    []any  `json:"examples"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// params lists an agent's parameters, required first, and an example of
// its parameters object that the schema accepts as far as the required
// members go: each filled from the schema's examples, default or enum,
// or else a plain value of its type.
func params(schema json.RawMessage) ([]param, map[string]any) {
	var s inputSchema
	example := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return nil, example
	}
	var out []param
	for name, p := range s.Properties {
		typ, _ := p.Type.(string)
		if list, ok := p.Type.([]any); ok && len(list) > 0 {
			typ, _ = list[0].(string)
		}
		row := param{Name: name, Type: typ, Description: p.Description, Required: slices.Contains(s.Required, name)}
		if p.Default != nil {
			row.Default = shown(p.Default)
		}
		for _, e := range p.Enum {
			row.Choices = append(row.Choices, shown(e))
		}
		out = append(out, row)
		if !row.Required {
			continue
		}
		switch {
		case len(p.Examples) > 0:
			example[name] = p.Examples[0]
		case p.Default != nil:
			example[name] = p.Default
		case len(p.Enum) > 0:
			example[name] = p.Enum[0]
		default:
			example[name] = map[string]any{"string": "example", "integer": 1, "number": 1, "boolean": true,
				"array": []any{}, "object": map[string]any{}}[typ]
		}
	}
	slices.SortFunc(out, func(a, b param) int {
		if a.Required != b.Required {
			return map[bool]int{true: -1, false: 1}[a.Required]
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, example
}

// shown is a schema value as a page shows it: a string as it is, anything
// else as JSON.
func shown(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// formParams reads the try-it form's fields into a parameters object, each
// by its type; an empty field is left out, for the schema's default.
func formParams(ps []param, value func(string) string) (json.RawMessage, error) {
	out := map[string]any{}
	for _, p := range ps {
		v := strings.TrimSpace(value("param." + p.Name))
		if v == "" {
			continue
		}
		var err error
		switch p.Type {
		case "string":
			out[p.Name] = v
		case "integer":
			out[p.Name], err = strconv.ParseInt(v, 10, 64)
		case "number":
			out[p.Name], err = strconv.ParseFloat(v, 64)
		case "boolean":
			out[p.Name], err = strconv.ParseBool(v)
		default:
			var x any
			err = json.Unmarshal([]byte(v), &x)
			out[p.Name] = x
		}
		if err != nil {
			want := map[string]string{"integer": "a whole number", "number": "a number", "boolean": "true or false"}[p.Type]
			if want == "" {
				want = "JSON"
			}
			return nil, crtx.InvalidField("param."+p.Name, "%q is not %s", v, want)
		}
	}
	return json.Marshal(out)
}
