package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx/api"
)

// The docs page renders /v1/openapi.json on the server, once: readable
// without JavaScript and without a network. It follows the document's
// tags in their order, which puts what callers use first and the
// operator's endpoints last, and its paths in their order within a tag.

type docParam struct {
	Name, In, Description, Notes string
	Type                         []typePart
	Required                     bool
}

type docBody struct {
	MediaType string
	Type      []typePart
	Fields    []docField // of a schema given inline, which has no section of its own
}

type docResponse struct {
	Code, Description string
	Body              *docBody
}

type docExample struct{ Code, Description, Body string }

type docOp struct {
	ID, Method, Path, Summary, Description, Credential string
	Params                                             []docParam
	Request                                            *docBody
	Responses                                          []docResponse
	Curl                                               string
	Samples                                            string
	CLI                                                []string
	Examples                                           []docExample
}

type docGroup struct {
	Tag, Description string
	Ops              []docOp
}

type docPage struct {
	API, Version, Description, OpenAPI, BaseURL string
	// Fee is the platform's share of a call, as a percentage.
	Fee     string
	Groups  []docGroup
	Schemas []docSchema
}

// buildDocs renders the OpenAPI document as the /docs page's content, with
// curl lines against the marketplace at base, once: each request only adds
// the visitor's header. feeBps is the platform's share of a call.
func (h *Handler) buildDocs(openAPI []byte, base string, feeBps int) (page, error) {
	var doc openAPIDoc
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		return page{}, err
	}
	p := docPage{API: doc.Info.Title, Version: doc.Info.Version, Description: doc.Info.Description, OpenAPI: doc.OpenAPI, BaseURL: base,
		Fee: pct(float64(feeBps) / 10_000)}
	groups := map[string]int{}
	for _, t := range doc.Tags {
		groups[t.Name] = len(p.Groups)
		p.Groups = append(p.Groups, docGroup{Tag: t.Name, Description: t.Description})
	}
	methods := []string{"get", "put", "post", "patch", "delete"}
	for _, path := range doc.Paths {
		for _, m := range path.Value {
			if m.Key == "parameters" {
				return page{}, fmt.Errorf("%s: parameters shared by a path's operations are not shown; give each operation its own", path.Key)
			}
			if !slices.Contains(methods, m.Key) {
				continue // the path's summary or description
			}
			var op operation
			if err := json.Unmarshal(m.Value, &op); err != nil {
				return page{}, fmt.Errorf("%s %s: %w", m.Key, path.Key, err)
			}
			o, err := docOperation(doc, base, strings.ToUpper(m.Key), path.Key, op)
			if err != nil {
				return page{}, fmt.Errorf("%s %s: %w", m.Key, path.Key, err)
			}
			g, ok := groups[first(op.Tags)]
			if !ok {
				return page{}, fmt.Errorf("%s %s: its tag %q is not among the document's tags, which order the page", m.Key, path.Key, first(op.Tags))
			}
			p.Groups[g].Ops = append(p.Groups[g].Ops, o)
		}
	}
	schemas := slices.SortedFunc(slices.Values(doc.Components.Schemas), func(a, b entry[*schema]) int { return strings.Compare(a.Key, b.Key) })
	for _, s := range schemas {
		d, err := componentSchema(s.Key, s.Value)
		if err != nil {
			return page{}, fmt.Errorf("schema %s: %w", s.Key, err)
		}
		p.Schemas = append(p.Schemas, d)
	}
	var b bytes.Buffer
	if err := h.pages["docs"].ExecuteTemplate(&b, "docs-body", p); err != nil {
		return page{}, err
	}
	return page{Title: doc.Info.Title + " — API reference", Data: template.HTML(b.String())}, nil
}

func docOperation(doc openAPIDoc, base, method, path string, op operation) (docOp, error) {
	if op.OperationID == "" {
		return docOp{}, fmt.Errorf("no operationId to anchor it at")
	}
	o := docOp{ID: op.OperationID, Method: method, Path: path, Summary: op.Summary, Description: op.Description, CLI: op.CLI}
	security := op.Security
	if security == nil {
		security = doc.Security
	}
	var alternatives []string
	for _, req := range security {
		if len(req) == 0 {
			// An operation open without one: paid per call with x402.
			alternatives = append(alternatives, "none, paying per call with x402")
			continue
		}
		var all []string
		for _, scheme := range slices.Sorted(maps.Keys(req)) {
			name, _, err := credential(scheme)
			if err != nil {
				return o, err
			}
			all = append(all, name+" ("+scheme+")") // the scheme's name in openapi.json
		}
		alternatives = append(alternatives, strings.Join(all, " and "))
	}
	o.Credential = strings.Join(alternatives, " or ")
	for _, prm := range op.Parameters {
		t, err := typeOf(prm.Schema)
		if err != nil {
			return o, fmt.Errorf("parameter %s: %w", prm.Name, err)
		}
		d := docParam{Name: prm.Name, In: prm.In, Description: prm.Description, Type: t, Required: prm.Required}
		if prm.Schema != nil {
			d.Notes = notes(prm.Schema)
		}
		o.Params = append(o.Params, d)
	}
	if op.RequestBody != nil {
		b, err := body(op.RequestBody.Content)
		if err != nil {
			return o, fmt.Errorf("request body: %w", err)
		}
		o.Request = b
	}
	stream := false
	for _, r := range op.Responses {
		resp := r.Value
		if resp.Ref != "" {
			name, err := refName(resp.Ref, "responses")
			if err != nil {
				return o, err
			}
			resp = doc.Components.Responses[name]
		}
		b, err := body(resp.Content)
		if err != nil {
			return o, fmt.Errorf("response %s: %w", r.Key, err)
		}
		desc := resp.Description
		if r.Value.Ref == "#/components/responses/Error" {
			desc = errorWords(r.Key)
		}
		o.Responses = append(o.Responses, docResponse{Code: r.Key, Description: desc, Body: b})
		if !strings.HasPrefix(r.Key, "2") {
			continue
		}
		for _, mt := range resp.Content {
			stream = stream || mt.Key == "text/event-stream"
			if mt.Value.Example != nil {
				o.Examples = append(o.Examples, docExample{Code: r.Key, Description: resp.Description, Body: indent(mt.Value.Example)})
			}
		}
	}
	scheme := ""
	if len(security) > 0 && len(security[0]) > 0 {
		scheme = slices.Sorted(maps.Keys(security[0]))[0]
	}
	var err error
	o.Curl, err = curlLine(base, method, path, op, scheme, stream)
	o.Samples = samples(op, scheme)
	return o, err
}

// body describes the first media type of a request or response; nil when
// it has none.
func body(content ordered[mediaType]) (*docBody, error) {
	if len(content) == 0 {
		return nil, nil
	}
	mt := content[0]
	t, err := typeOf(mt.Value.Schema)
	if err != nil {
		return nil, err
	}
	b := &docBody{MediaType: mt.Key, Type: t}
	if s := mt.Value.Schema; s != nil && s.Ref == "" {
		if in, _ := inlineObject(s); in != nil {
			b.Fields, err = fieldsOf("", in)
		}
	}
	return b, err
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// docs shows the page rendered at start under the visitor's header.
func (h *Handler) docs(w http.ResponseWriter, r *http.Request) error {
	v := h.visitor(r)
	// The site's script adds the examples' language tabs and copy
	// buttons; without it every example shows, each under its heading.
	return h.render(w, "docs", v.page(h.docsPage.Title, h.docsPage.Data))
}

// statusWords say what an error status means across the API, before the
// codes that answer with it.
var statusWords = map[int]string{
	400: "The request is malformed or a field is invalid; the message names it, and error.fields lists each field when several are at fault.",
	401: "No credential, or one that is not valid for this call (the wrong kind, expired, revoked or unknown).",
	402: "Not paid for: the balance or the key's spend limit does not cover the price, or, without a key, how to pay it with x402.",
	403: "Refused from this origin.",
	404: "No such thing for this credential: unknown, or another wallet's (which answers the same).",
	405: "The path does not take this method.",
	408: "The agent did not answer within the timeout; the escrow is refunded.",
	409: "Not in this state: the price changed, an Idempotency-Key was used for another request or is still running, or the thing is final, closed or not yet final.",
	413: "The body is larger than this endpoint takes.",
	415: "The body is not JSON: send Content-Type: application/json.",
	422: "Well formed, but it cannot be done now: the agent is paused, or the endpoint cannot be reached.",
	429: "Too many requests: wait the Retry-After header's seconds.",
	500: "The agent failed (its escrow refunded), or the marketplace did; an internal error's message quotes the request id to report.",
	502: "The creator's service answered something invalid (a bad shape or signature), or could not be reached at all. The escrow is refunded.",
	503: "Unavailable for a moment: try again after the Retry-After header's seconds; nothing was written.",
}

// errorWords is an error response's description in the reference: what the
// status means and the codes it carries.
func errorWords(status string) string {
	n, _ := strconv.Atoi(status)
	words := statusWords[n]
	if words == "" {
		words = "An error."
	}
	if codes := api.CodesOf(n); len(codes) > 0 {
		words += " Codes: " + strings.Join(codes, ", ") + "."
	}
	return words
}
