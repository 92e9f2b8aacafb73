package http_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/getkin/kin-openapi/openapi3"
)

// operation is one operation of openapi.json with where it is.
type operation struct {
	where string
	op    *openapi3.Operation
}

func operations(t *testing.T) []operation {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	// Not validated here (router does that): these tests report what they
	// look for themselves, and go on past the first finding.
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	var ops []operation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, operation{method + " " + path, op})
		}
	}
	if len(ops) == 0 {
		t.Fatal("openapi.json has no operations")
	}
	return ops
}

// The /docs page anchors each operation at its operationId, so every
// operation needs one, and links stay unambiguous only if they differ.
func TestOpenAPIOperationIDs(t *testing.T) {
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	seen := map[string]string{}
	for _, o := range operations(t) {
		id := o.op.OperationID
		switch {
		case id == "":
			t.Errorf("%s has no operationId", o.where)
		case !camel.MatchString(id):
			t.Errorf("%s: operationId %q is not camelCase", o.where, id)
		case seen[id] != "":
			t.Errorf("%s and %s share the operationId %q", seen[id], o.where, id)
		}
		seen[id] = o.where
	}
}

// Every operation shows a caller what to send and what comes back: an
// example of its request body, of each success response with a body, and
// of each path parameter (the /docs page builds its curl line from them).
// Each example must be valid against its own schema, or it would teach a
// request the server refuses.
func TestOpenAPIExamples(t *testing.T) {
	for _, o := range operations(t) {
		if rb := o.op.RequestBody; rb != nil {
			for mt, media := range rb.Value.Content {
				checkExample(t, o.where+" request "+mt, media.Schema, media.Example)
			}
		}
		successes := 0
		for code, resp := range o.op.Responses.Map() {
			if !strings.HasPrefix(code, "2") {
				continue
			}
			successes++
			for mt, media := range resp.Value.Content {
				checkExample(t, o.where+" → "+code+" "+mt, media.Schema, media.Example)
			}
		}
		if successes == 0 {
			t.Errorf("%s has no success response", o.where)
		}
		for _, p := range o.op.Parameters {
			if p.Value.Example == nil {
				if p.Value.In == openapi3.ParameterInPath {
					t.Errorf("%s: path parameter %s has no example", o.where, p.Value.Name)
				}
				continue
			}
			checkExample(t, o.where+" parameter "+p.Value.Name, p.Value.Schema, p.Value.Example)
		}
	}
}

func checkExample(t *testing.T, where string, schema *openapi3.SchemaRef, example any) {
	t.Helper()
	if example == nil {
		t.Errorf("%s has no example", where)
		return
	}
	if err := schema.Value.VisitJSON(example, openapi3.MultiErrors()); err != nil {
		t.Errorf("%s: the example does not match its schema: %v", where, err)
	}
	checkIDs(t, where, "", example)
}

// idFormats are the formats the marketplace writes its ids in: examples
// with made-up ids would teach callers to parse the wrong thing.
var idFormats = map[string]*regexp.Regexp{
	"execution_id":   regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`),
	"agent_id":       regexp.MustCompile(`^agt_[A-Za-z0-9]{16}$`),
	"dispute_id":     regexp.MustCompile(`^dsp_[A-Za-z0-9]{20}$`),
	"transaction_id": regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{33}$`),
	"session_token":  regexp.MustCompile(`^crtx_sess_[A-Za-z0-9]{32}$`),
	"key":            regexp.MustCompile(`^(crtx_(live|test)_[A-Za-z0-9]{32}|whsec_[A-Za-z0-9+/]{43}=)$`),
	"result_hash":    regexp.MustCompile(`^sha256:[0-9a-f]{64}$`),
}

// addressFields hold a wallet or public key: base58 of 32 bytes.
var addressFields = map[string]bool{"wallet": true, "pubkey": true, "signing_public_key": true,
	"ledger_authority_public_key": true, "authority_public_key": true, "owner": true, "address": true}

func checkIDs(t *testing.T, where, field string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			checkIDs(t, where, k, x)
		}
	case []any:
		for _, x := range v {
			checkIDs(t, where, field, x)
		}
	case string:
		if re := idFormats[field]; re != nil && !re.MatchString(v) {
			t.Errorf("%s: %s %q is not in the format the marketplace writes", where, field, v)
		}
		if addressFields[field] {
			if _, err := crtx.ParseAddress(field, v); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
}
