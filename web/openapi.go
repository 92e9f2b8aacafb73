package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The parts of an OpenAPI 3.1 document that /docs shows. Objects whose
// order the page follows (paths, methods, properties, responses) decode
// into ordered, because a Go map forgets the order the document's authors
// chose.

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Title, Version, Description string
	} `json:"info"`
	Security   []map[string][]string                `json:"security"`
	Tags       []struct{ Name, Description string } `json:"tags"`
	Paths      ordered[ordered[json.RawMessage]]    `json:"paths"`
	Components struct {
		Schemas   ordered[*schema]    `json:"schemas"`
		Responses map[string]response `json:"responses"`
	} `json:"components"`
}

type operation struct {
	OperationID string                `json:"operationId"`
	Summary     string                `json:"summary"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Security    []map[string][]string `json:"security"`
	Parameters  []parameter           `json:"parameters"`
	RequestBody *struct {
		Content ordered[mediaType] `json:"content"`
	} `json:"requestBody"`
	Responses ordered[response] `json:"responses"`
	CLI       []string          `json:"x-crtx-cli"`
}

type parameter struct {
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Description string          `json:"description"`
	Required    bool            `json:"required"`
	Schema      *schema         `json:"schema"`
	Example     json.RawMessage `json:"example"`
}

type response struct {
	Ref         string             `json:"$ref"`
	Description string             `json:"description"`
	Content     ordered[mediaType] `json:"content"`
}

type mediaType struct {
	Schema  *schema         `json:"schema"`
	Example json.RawMessage `json:"example"`
}

type schema struct {
	Ref                  string           `json:"$ref"`
	Type                 types            `json:"type"`
	Format               string           `json:"format"`
	Description          string           `json:"description"`
	Enum                 []any            `json:"enum"`
	Default              any              `json:"default"`
	Pattern              string           `json:"pattern"`
	Minimum              *float64         `json:"minimum"`
	Maximum              *float64         `json:"maximum"`
	MinLength            *int             `json:"minLength"`
	MaxLength            *int             `json:"maxLength"`
	MaxItems             *int             `json:"maxItems"`
	Properties           ordered[*schema] `json:"properties"`
	Required             []string         `json:"required"`
	Items                *schema          `json:"items"`
	AllOf                []*schema        `json:"allOf"`
	OneOf                []*schema        `json:"oneOf"`
	AnyOf                []*schema        `json:"anyOf"`
	AdditionalProperties json.RawMessage  `json:"additionalProperties"`
}

// types is a schema's type: one name, or in 3.1 a list such as
// ["string", "null"].
type types []string

func (t *types) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		return json.Unmarshal(b, (*[]string)(t))
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*t = types{one}
	return nil
}

type entry[T any] struct {
	Key   string
	Value T
}

// ordered is a JSON object decoded with its keys in document order.
type ordered[T any] []entry[T]

func (o *ordered[T]) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return fmt.Errorf("want an object, got %v", t)
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return err
		}
		var v T
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("%v: %w", t, err)
		}
		*o = append(*o, entry[T]{t.(string), v})
	}
	return nil
}

// refName is the component a $ref names: "Agent" for
// "#/components/schemas/Agent".
func refName(ref, kind string) (string, error) {
	name, ok := strings.CutPrefix(ref, "#/components/"+kind+"/")
	if !ok || name == "" {
		return "", fmt.Errorf("$ref %q is not to #/components/%s/", ref, kind)
	}
	return name, nil
}
