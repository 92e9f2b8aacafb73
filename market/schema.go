package market

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// noLoader refuses every $ref outside the schema itself: a listing's schema
// must never make the marketplace read a file or fetch a URL.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the schema are not allowed (%s)", url)
}

// CompileSchema compiles a JSON Schema (draft 2020-12 unless it says otherwise).
func CompileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource("crtx:schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("crtx:schema.json")
}

func checkSchema(field string, raw json.RawMessage, mustBeObject bool) error {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return crtx.InvalidField(field, "must be a JSON Schema object")
	}
	if mustBeObject && obj["type"] != "object" {
		return crtx.InvalidField(field, "must be a JSON Schema whose type is \"object\"")
	}
	if _, err := CompileSchema(raw); err != nil {
		return crtx.InvalidField(field, "does not compile as a JSON Schema: %s", firstLine(err.Error()))
	}
	return nil
}

// validate checks parameters against a compiled input schema. Each
// parameter at fault is named on its own (the field "parameters.<name>",
// or "parameters" for the object as a whole), in words a person reads
// beside a form's field rather than the validator's keyword paths.
func validate(sch *jsonschema.Schema, params json.RawMessage) error {
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	v, jerr := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if jerr != nil {
		return crtx.Errorf(crtx.CodeInvalidRequest, "parameters: not JSON")
	}
	err := sch.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var errs []error
	seen := map[string]bool{}
	for _, leaf := range leaves(ve) {
		for _, f := range inWords(leaf) {
			if !seen[f.field] { // the first fault of a field is the one to mend first
				seen[f.field] = true
				errs = append(errs, crtx.InvalidField(f.field, "%s", f.words))
			}
		}
	}
	if len(errs) == 0 {
		return crtx.InvalidField("parameters", "do not match the agent's input schema: %s", firstLine(ve.Error()))
	}
	return errors.Join(errs...)
}

// leaves are the innermost causes of ve, in the validator's order. A
// choice between forms (anyOf, oneOf) is a leaf itself: its branches'
// faults are each one way it could have held, not all to mend.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		return []*jsonschema.ValidationError{ve}
	}
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// inWords says what is wrong with the parameters at one leaf, by field: a
// missing property names the property, anything else the top-level
// parameter it lies in (a nested path follows in the words).
func inWords(ve *jsonschema.ValidationError) []fault {
	field, where := "parameters", ""
	if loc := ve.InstanceLocation; len(loc) > 0 {
		field = "parameters." + loc[0]
		if len(loc) > 1 {
			where = "/" + strings.Join(loc[1:], "/") + ": "
		}
	}
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	var words string
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		var out []fault
		for _, name := range k.Missing {
			if len(ve.InstanceLocation) == 0 {
				out = append(out, fault{"parameters." + name, "required"})
			} else {
				out = append(out, fault{field, where + name + " is required"})
			}
		}
		return out
	case *kind.AdditionalProperties:
		var out []fault
		for _, name := range k.Properties {
			if len(ve.InstanceLocation) == 0 {
				out = append(out, fault{"parameters." + name, "not a parameter of this agent"})
			} else {
				out = append(out, fault{field, where + name + " is not allowed here"})
			}
		}
		return out
	case *kind.Type:
		words = "must be " + strings.Join(typeWords(k.Want), " or ")
	case *kind.Enum:
		choices := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			choices[i] = strings.Trim(string(b), `"`)
		}
		words = "one of " + strings.Join(choices, ", ")
	case *kind.Const:
		b, _ := json.Marshal(k.Want)
		words = "must be " + strings.Trim(string(b), `"`)
	case *kind.MinLength:
		words = "at least " + plural(k.Want, "character")
	case *kind.MaxLength:
		words = "at most " + plural(k.Want, "character")
	case *kind.Pattern:
		words = "must match the pattern " + k.Want
	case *kind.Format:
		words = "must be a valid " + k.Want
	case *kind.Minimum:
		words = "at least " + k.Want.RatString()
	case *kind.Maximum:
		words = "at most " + k.Want.RatString()
	case *kind.ExclusiveMinimum:
		words = "more than " + k.Want.RatString()
	case *kind.ExclusiveMaximum:
		words = "less than " + k.Want.RatString()
	case *kind.MultipleOf:
		words = "a multiple of " + k.Want.RatString()
	case *kind.MinItems:
		words = "at least " + plural(k.Want, "item")
	case *kind.MaxItems:
		words = "at most " + plural(k.Want, "item")
	case *kind.AnyOf, *kind.OneOf:
		words = "matches none of the forms the agent allows; see its input schema"
		if one, ok := k.(*kind.OneOf); ok && one.Subschemas != nil {
			words = "matches more than one of the forms the agent allows, where it must match one"
		}
	case *kind.UniqueItems:
		words = fmt.Sprintf("items %d and %d are the same", k.Duplicates[0], k.Duplicates[1])
	default:
		words = "does not match the agent's input schema (" + firstLine(ve.Error()) + ")"
	}
	return []fault{{field, where + words}}
}

// fault is what is wrong with one field.
type fault struct{ field, words string }

// typeWords are JSON Schema type names as a person says them.
func typeWords(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = map[string]string{"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
			"object": "an object", "array": "a list", "null": "null"}[t]
		if out[i] == "" {
			out[i] = t
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
