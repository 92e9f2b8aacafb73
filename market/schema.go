package market

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/santhosh-tekuri/jsonschema/v6"
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

// validate checks parameters against a compiled input schema and names
// the first failing path.
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
	if errors.As(err, &ve) {
		return crtx.Errorf(crtx.CodeInvalidRequest, "parameters do not match the agent's input schema: %s", firstLeaf(ve))
	}
	return err
}

func firstLeaf(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return "/" + strings.Join(ve.InstanceLocation, "/") + ": " + firstLine(ve.Error())
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
