package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/ipfs"
	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"
)

// gen draws a value for a schema: valid most of the time, with the
// schema's enums, bounds and required fields, and the known ids of the
// running marketplace for strings.
func gen(rt *rapid.T, s *openapi3.Schema, known []string, depth int) any {
	if s == nil || depth > 4 {
		return nil
	}
	if len(s.Enum) > 0 {
		return rapid.SampledFrom(s.Enum).Draw(rt, "enum")
	}
	typ := "string"
	if s.Type != nil {
		for _, ty := range s.Type.Slice() {
			if ty != "null" {
				typ = ty
				break
			}
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if slices.Contains(s.Required, n) || rapid.Bool().Draw(rt, "include "+n) {
				out[n] = gen(rt, s.Properties[n].Value, known, depth+1)
			}
		}
		return out
	case "array":
		n := rapid.IntRange(0, 3).Draw(rt, "len")
		out := make([]any, n)
		for i := range out {
			if s.Items != nil {
				out[i] = gen(rt, s.Items.Value, known, depth+1)
			}
		}
		return out
	case "integer":
		lo, hi := 0, 400
		if s.Min != nil {
			lo = int(*s.Min)
		}
		if s.Max != nil {
			hi = int(*s.Max)
		}
		return rapid.IntRange(lo, max(lo, hi)).Draw(rt, "int")
	case "number":
		return float64(rapid.IntRange(0, 10_000_000).Draw(rt, "micro")) / 1_000_000
	case "boolean":
		return rapid.Bool().Draw(rt, "bool")
	}
	if s.Format == "date-time" {
		return time.Now().UTC().Format(time.RFC3339)
	}
	return rapid.SampledFrom(known).Draw(rt, "string")
}

// mutate breaks a valid body in one of the ways clients do.
func mutate(rt *rapid.T, body any) any {
	switch rapid.IntRange(0, 9).Draw(rt, "mutation") {
	case 0:
		return "not an object"
	case 1:
		if m, ok := body.(map[string]any); ok {
			m["unknown_field"] = 1
		}
	case 2:
		if m, ok := body.(map[string]any); ok {
			for k := range m {
				m[k] = []any{true, nil}
				break
			}
		}
	case 3:
		return nil
	}
	return body
}

func TestOpenAPIFuzz(t *testing.T) {
	m := newMarket(t, "1000")
	agent := m.list(newService(t, echo), "0.01")
	rec := m.ran(t, m.liveKey, agent)
	d, err := m.liveKey.OpenDispute(ctx, rec.ExecutionID, crtx.DisputeParams{Reason: "other", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := m.callerC.Keys(ctx)
	tx, _ := m.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountWallet, m.callerW.address))
	svc := newService(t, echo)
	known := []string{agent, rec.ExecutionID, d.DisputeID, keys[0].ID, m.callerW.address, m.creatorW.address,
		crtx.AccountAddress(crtx.AccountWallet, m.callerW.address), tx.Transactions[0].ID, ipfs.CID("echo: x"),
		"devnet", "mainnet", "1", svc.URL, svc.PubKey, "x", "", "agt_unknown", "../../etc/passwd", "%00", strings.Repeat("z", 300)}
	creds := map[string]string{"none": "", "key": m.liveKey.Token(), "devkey": m.key.Token(), "session": m.creatorC.Token(),
		"caller": m.callerC.Token(), "admin": adminToken}
	credNames := []string{"none", "key", "devkey", "session", "caller", "admin"}

	raw, err := os.ReadFile("../http/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	type op struct {
		method, path string
		op           *openapi3.Operation
	}
	var ops []op
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			if path == "/v1/executions/{execution_id}/events" {
				continue // a stream; its status is checked elsewhere
			}
			ops = append(ops, op{method, path, o})
		}
	}
	slices.SortFunc(ops, func(a, b op) int { return strings.Compare(a.method+a.path, b.method+b.path) })
	sent := 0
	for _, o := range ops {
		t.Run(o.method+" "+o.path, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				path := o.path
				q := url.Values{}
				for _, p := range o.op.Parameters {
					pv := p.Value
					var v string
					if pv.Schema != nil && rapid.IntRange(0, 3).Draw(rt, "valid "+pv.Name) > 0 {
						b, _ := json.Marshal(gen(rt, pv.Schema.Value, known, 0))
						v = strings.Trim(string(b), `"`)
					} else {
						v = rapid.SampledFrom(known).Draw(rt, "raw "+pv.Name)
					}
					switch pv.In {
					case "path":
						if v == "" {
							v = "x"
						}
						path = strings.ReplaceAll(path, "{"+pv.Name+"}", url.PathEscape(v))
					case "query":
						if pv.Required || rapid.Bool().Draw(rt, "send "+pv.Name) {
							q.Set(pv.Name, v)
						}
					}
				}
				var body io.Reader
				ct := ""
				if o.op.RequestBody != nil {
					mt := o.op.RequestBody.Value.Content.Get("application/json")
					var v any
					if mt != nil && mt.Schema != nil {
						v = gen(rt, mt.Schema.Value, known, 0)
					}
					if rapid.IntRange(0, 3).Draw(rt, "break body") == 0 {
						v = mutate(rt, v)
					}
					b, _ := json.Marshal(v)
					body, ct = bytes.NewReader(b), "application/json"
				}
				u := m.d.URL + path
				if len(q) > 0 {
					u += "?" + q.Encode()
				}
				req, err := http.NewRequest(strings.ToUpper(o.method), u, body)
				if err != nil {
					return
				}
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				if tok := creds[rapid.SampledFrom(credNames).Draw(rt, "credential")]; tok != "" {
					req.Header.Set("Authorization", "Bearer "+tok)
				}
				resp, err := m.http.Do(req) // checks the answer against openapi.json
				if err != nil {
					rt.Fatalf("%s %s: %v", req.Method, u, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				sent++
				if resp.StatusCode >= 500 {
					rt.Fatalf("%s %s → %d %s", req.Method, u, resp.StatusCode, b)
				}
			})
		})
	}
	t.Logf("%d generated requests over %d operations", sent, len(ops))
}
