package market

import (
	"encoding/json"
	"testing"

	"github.com/crtx-market/crtx"
)

// A refusal of parameters names each parameter at fault, in words a person
// reads beside the form's field, not the validator's keyword paths.
func TestParametersInWords(t *testing.T) {
	sch, err := CompileSchema(json.RawMessage(`{"type":"object","additionalProperties":false,
		"properties":{"delimiter":{"type":"string","maxLength":1},"lang":{"enum":["en","de"]},"n":{"type":"integer","minimum":1},
		"tags":{"type":"array","items":{"type":"string","minLength":2}},"opts":{"type":"object","required":["depth"]}},
		"required":["lang","n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		params string
		want   map[string]string
	}{
		{`{"delimiter":";;","lang":"en","n":1}`, map[string]string{"parameters.delimiter": "parameters.delimiter: at most 1 character"}},
		{`{}`, map[string]string{"parameters.lang": "parameters.lang: required", "parameters.n": "parameters.n: required"}},
		{`{"lang":"fr","n":0}`, map[string]string{"parameters.lang": "parameters.lang: one of en, de", "parameters.n": "parameters.n: at least 1"}},
		{`{"lang":"en","n":"two"}`, map[string]string{"parameters.n": "parameters.n: must be a whole number"}},
		{`{"lang":"en","n":2,"x":1}`, map[string]string{"parameters.x": "parameters.x: not a parameter of this agent"}},
		{`{"lang":"en","n":2,"tags":["a"]}`, map[string]string{"parameters.tags": "parameters.tags: /0: at least 2 characters"}},
		{`{"lang":"en","n":2,"opts":{}}`, map[string]string{"parameters.opts": "parameters.opts: depth is required"}},
		{`{"lang":"en","n":2}`, nil},
	} {
		err := validate(sch, json.RawMessage(c.params))
		got := map[string]string{}
		for _, f := range crtx.FieldErrors(err) {
			if f.Code != crtx.CodeInvalidRequest {
				t.Errorf("%s: code %s", c.params, f.Code)
			}
			got[f.Field] = f.Message
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v; want %v", c.params, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q; want %q", c.params, k, got[k], v)
			}
		}
	}
}

// A choice between forms is one fault of its parameter, not a fault of
// each branch.
func TestParametersInWordsOfAChoice(t *testing.T) {
	sch, err := CompileSchema(json.RawMessage(`{"type":"object",
		"properties":{"n":{"anyOf":[{"type":"integer"},{"type":"string","pattern":"^[0-9]+$"}]}},
		"anyOf":[{"required":["url"]},{"required":["text"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range crtx.FieldErrors(validate(sch, json.RawMessage(`{"n":"abc"}`))) {
		got[f.Field] = f.Message
	}
	want := map[string]string{
		"parameters":   "parameters: matches none of the forms the agent allows; see its input schema",
		"parameters.n": "parameters.n: matches none of the forms the agent allows; see its input schema",
	}
	if len(got) != len(want) || got["parameters"] != want["parameters"] || got["parameters.n"] != want["parameters.n"] {
		t.Errorf("faults = %v; want %v", got, want)
	}
}
