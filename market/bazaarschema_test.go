package market

import (
	"encoding/json"
	"testing"
)

// Example parameters come from the schema's examples, else its
// properties'; none is given that the schema refuses.
func TestExampleParameters(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object","examples":[{"n":2}],"properties":{"n":{"type":"integer","default":1}}}`:                              `{"n":2}`,
		`{"type":"object","examples":[{"n":"x"}],"properties":{"n":{"type":"integer","default":1}}}`:                            `{"n":1}`,
		`{"type":"object","properties":{"n":{"type":"integer","examples":[4],"default":1},"u":{"enum":["a","b"]}}}`:             `{"n":4,"u":"a"}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"default":1}}}`:                                       ``,
		`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`:                                              ``,
		`{"type":"object","examples":["text"],"properties":{"c":{"const":true}},"required":["c"],"additionalProperties":false}`: `{"c":true}`,
	} {
		sch, err := CompileSchema(json.RawMessage(schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(exampleParameters(json.RawMessage(schema), sch)); got != want {
			t.Errorf("%s: %s, want %s", schema, got, want)
		}
	}
}
