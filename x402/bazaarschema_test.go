package x402

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A schema moved into the bazaar extension loses its $schema and
// $id and has its local references point where it now stands; instances
// that look like references are left alone; a schema with a reference
// outside itself, or a property called "$ref" (which @x402/extensions'
// validator takes for one), cannot stand there; one of an older draft
// that 2020-12 refuses does not compile alone.
func TestEmbedSchema(t *testing.T) {
	const at = "#/properties/p"
	in := `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"https://x.example/s.json","type":"object",
		"definitions":{"n":{"type":"integer"}},
		"properties":{"a":{"$ref":"#/definitions/n"},"b":{"$ref":"#"},"c":{"$ref":"#name"},"d":{"const":{"$ref":"#/x"}}},
		"items":[{"$ref":"#/definitions/n"}]}`
	v, alone, ok := EmbedSchema(json.RawMessage(in), at)
	if !ok {
		t.Fatal("not embeddable")
	}
	var want any
	json.Unmarshal([]byte(`{"type":"object","definitions":{"n":{"type":"integer"}},
		"properties":{"a":{"$ref":"#/properties/p/definitions/n"},"b":{"$ref":"#/properties/p"},"c":{"$ref":"#name"},"d":{"const":{"$ref":"#/x"}}},
		"items":[{"$ref":"#/properties/p/definitions/n"}]}`), &want)
	got, _ := json.Marshal(v)
	var gotv any
	json.Unmarshal(got, &gotv)
	if !reflect.DeepEqual(gotv, want) {
		t.Errorf("embedded: %s", got)
	}
	// Alone, the references are the schema's own, and the draft-07 array
	// of items is no 2020-12 schema.
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(alone))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("alone.json", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("alone.json"); err == nil {
		t.Errorf("%s compiles as draft 2020-12", alone)
	}

	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"https://x.example/other.json"}}}`,
		`{"type":"object","properties":{"a":{"$id":"https://x.example/a","type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"other.json#/n"}}}`,
		`{"type":"object","properties":{"$ref":{"type":"string"}}}`,
	} {
		if _, _, ok := EmbedSchema(json.RawMessage(s), at); ok {
			t.Errorf("%s is embeddable", s)
		}
	}
	if v, _, ok := EmbedSchema(json.RawMessage(`true`), at); !ok || v != true {
		t.Errorf("the schema true: %v %v", v, ok)
	}
}
