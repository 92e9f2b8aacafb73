package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/crtx-market/crtx/internal/nodetest"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
)

// discover reads GET /discovery/resources with the query query, through
// the client that checks every answer against openapi.json, and returns
// the status and the body.
func discover(t *testing.T, e *env, query string) (int, []byte) {
	t.Helper()
	resp, err := e.http.Get(e.d.URL + "/discovery/resources" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// discovered is the page GET /discovery/resources answers query with; any
// status but 200 fails the test.
func discovered(t *testing.T, e *env, query string) api.DiscoveryPage {
	t.Helper()
	status, b := discover(t, e, query)
	var page api.DiscoveryPage
	if err := json.Unmarshal(b, &page); status != 200 || err != nil {
		t.Fatalf("GET /discovery/resources%s: %d %s (%v)", query, status, b, err)
	}
	return page
}

// resources are the agent ids of a page's items, in order.
func resources(p api.DiscoveryPage) []string {
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		ids[i] = it.Metadata.Crtx.AgentID
	}
	return ids
}

// bazaarSchema decodes an item's bazaar schema and returns the part at
// the path of property names given.
func bazaarSchema(t *testing.T, it api.DiscoveryResource, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(it.Extensions.Bazaar.Schema, &v); err != nil {
		t.Fatal(err)
	}
	for _, name := range path {
		m, _ := v.(map[string]any)
		v = m["properties"].(map[string]any)[name]
	}
	return v
}

func jsonValue(t *testing.T, raw string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// financeSchema is an input schema with a local reference, a $schema and
// examples to make parameters of.
const financeSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
	"$defs":{"currency":{"type":"string","enum":["USD","EUR"]}},
	"properties":{"currency":{"$ref":"#/$defs/currency","default":"EUR"},"rows":{"type":"integer","minimum":1,"examples":[3]}},
	"required":["currency"]}`

// TestDiscoveryResources: GET /discovery/resources lists every active
// agent, and only those, as an x402 resource in the Bazaar's format: its
// execute URL, the accepts its own 402 offers, the bazaar extension whose
// parameters are its input schema (local references rewritten to where it
// stands), and the catalog's statistics under metadata.crtx; in pages and
// with the catalog's filters and the Bazaar client's. The official Bazaar
// client (@x402/extensions) pages through it and validates every item.
func TestDiscoveryResources(t *testing.T) {
	x := newX402Market(t)
	used := x.list(newService(t, echo), "0.02")
	finance := x.list(newService(t, echo), "0.05", map[string]any{"name": "Ledger checker", "tagline": "Checks ledgers.",
		"tags": []string{"finance"}, "input_schema": json.RawMessage(financeSchema)})
	paused := x.list(newService(t, echo), "0.01")
	if _, err := patch(x.creatorC, paused, map[string]any{"status": "paused"}); err != nil {
		t.Fatal(err)
	}
	// One mainnet execution, for statistics the catalog counts.
	if _, err := x.admin.Deposit(ctx, crtx.Mainnet, x.callerW.address, usdc("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := x.liveKey.Execute(ctx, used, run("x"), client.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	x.rollup()
	_, _, pr, _, _ := x.post(used, "", run("x"))
	if pr == nil || len(pr.Accepts) != 1 {
		t.Fatalf("the 402 of %s: %+v", used, pr)
	}
	network := pr.Accepts[0].Network

	wk, err := x.anon.WellKnown(ctx)
	if err != nil || wk.X402DiscoveryURL != x.d.URL+"/discovery/resources" {
		t.Fatalf("well-known: %+v, %v", wk, err)
	}

	page := discovered(t, x.env, "")
	if page.X402Version != 2 || page.Pagination != (api.Page{Total: 2, Limit: 20, Offset: 0}) ||
		!slices.Equal(resources(page), []string{used, finance}) {
		t.Fatalf("the list: %+v", page)
	}
	it := page.Items[0]
	catalog, err := x.anon.Agent(ctx, used, crtx.Mainnet)
	if err != nil {
		t.Fatal(err)
	}
	wantEvidence := api.DiscoveryEvidence{AgentID: used, ListingURL: x.d.URL + "/v1/agents/" + used, Environment: crtx.Mainnet,
		TotalExecutions: 1, SuccessRate: 1, AvgExecutionTimeMS: catalog.AvgExecutionTimeMS}
	if it.Resource != x.d.URL+"/v1/agents/"+used+"/execute" || it.Type != "http" || it.X402Version != 2 ||
		!reflect.DeepEqual(it.Accepts, pr.Accepts) || it.LastUpdated.IsZero() || it.Description != "Word counter: Counts words in a text." ||
		it.MimeType != "application/json" || !slices.Equal(it.Tags, []string{"writing", "data"}) ||
		it.Metadata.Name != "Word counter" || it.Metadata.Description != "Counts words, lines and characters." ||
		it.Metadata.Price != usdc("0.02") || it.Metadata.Crtx != wantEvidence || catalog.TotalExecutions != 1 {
		t.Fatalf("the used agent: %s", mustJSON(it))
	}
	in := it.Extensions.Bazaar.Info.Input
	if in.Type != "http" || in.Method != "POST" || in.BodyType != "json" || string(in.Body) != `{"task":"The task for this agent, in words"}` ||
		it.Extensions.Bazaar.Info.Output.Type != "json" {
		t.Fatalf("bazaar info: %+v", it.Extensions.Bazaar.Info)
	}
	params := bazaarSchema(t, it, "input", "body", "parameters")
	if !reflect.DeepEqual(params, jsonValue(t, `{"type":"object","properties":{"lang":{"type":"string"}},"required":[]}`)) {
		t.Errorf("the parameters' schema: %s", mustJSON(params))
	}
	if out := bazaarSchema(t, it, "output", "example"); !reflect.DeepEqual(out, jsonValue(t, `{"type":"object"}`)) {
		t.Errorf("the output's schema: %s", mustJSON(out))
	}

	// The finance agent's schema stands without its $schema, its reference
	// pointing where its $defs now are; its example parameters are made of
	// its default and example, and a price and accepts of its own.
	fin := page.Items[1]
	want := jsonValue(t, financeSchema).(map[string]any)
	delete(want, "$schema")
	want["properties"].(map[string]any)["currency"].(map[string]any)["$ref"] = "#/properties/input/properties/body/properties/parameters/$defs/currency"
	if got := bazaarSchema(t, fin, "input", "body", "parameters"); !reflect.DeepEqual(got, any(want)) {
		t.Errorf("the finance parameters' schema: %s", mustJSON(got))
	}
	if body := string(fin.Extensions.Bazaar.Info.Input.Body); body != `{"task":"The task for this agent, in words","parameters":{"currency":"EUR","rows":3}}` {
		t.Errorf("the finance example body: %s", body)
	}
	if len(fin.Accepts) != 1 || fin.Accepts[0].Amount != "50000" || fin.Accepts[0].Network != network || fin.Metadata.Price != usdc("0.05") ||
		fin.Metadata.Crtx.TotalExecutions != 0 || !slices.Equal(fin.Tags, []string{"finance"}) {
		t.Errorf("the finance agent: %s", mustJSON(fin))
	}

	// Pages, and the catalog's filters, sorts and statistics.
	for query, want := range map[string][]string{
		"?limit=1&offset=1":       {finance},
		"?tags=finance":           {finance},
		"?q=ledger":               {finance},
		"?sort=price_desc":        {finance, used},
		"?min_executions=1":       {used},
		"?limit=1&offset=2":       {},
		"?environment=devnet":     {finance, used}, // no devnet execution: ties, by id
		"?type=http&scheme=exact": {used, finance},
		"?extensions=bazaar&network=" + network + "&payTo=" + x.chain.treasury: {used, finance},
		"?network=solana:nowhere":   {},
		"?payTo=" + x.payer.address: {},
		"?type=mcp":                 {},
		"?scheme=upto":              {},
	} {
		p := discovered(t, x.env, query)
		if query == "?environment=devnet" {
			slices.Sort(want)
		}
		if !slices.Equal(resources(p), want) {
			t.Errorf("%s: %v, want %v", query, resources(p), want)
		}
		if len(want) == 0 && query != "?limit=1&offset=2" && p.Pagination.Total != 0 {
			t.Errorf("%s: total %d of nothing", query, p.Pagination.Total)
		}
	}
	if p := discovered(t, x.env, "?limit=1&offset=1"); p.Pagination != (api.Page{Total: 2, Limit: 1, Offset: 1}) {
		t.Errorf("the second page: %+v", p.Pagination)
	}
	if p := discovered(t, x.env, "?tags=finance"); p.Pagination.Total != 1 {
		t.Errorf("the finance total: %+v", p.Pagination)
	}
	if p := discovered(t, x.env, "?environment=devnet"); p.Items[0].Metadata.Crtx.Environment != crtx.Devnet ||
		p.Items[0].Metadata.Crtx.TotalExecutions != 0 {
		t.Errorf("devnet statistics: %+v", p.Items[0].Metadata.Crtx)
	}
	for query, word := range map[string]string{"?limit=0": "limit", "?cursor=abc": "cursor", "?sort=cheapest": "sort", "?type=http&type=mcp": "type"} {
		status, b := discover(t, x.env, query)
		var eb api.ErrorBody
		json.Unmarshal(b, &eb)
		if status != 400 || eb.Error.Code != "invalid_request" || !bytes.Contains([]byte(eb.Error.Message), []byte(word)) {
			t.Errorf("%s: %d %s", query, status, b)
		}
	}

	// The official Bazaar client pages through the list one item at a
	// time and validates each item with the extension's own validators.
	var out struct {
		Total     int      `json:"total"`
		Resources []string `json:"resources"`
		Problems  []string `json:"problems"`
	}
	cmd := nodetest.Script(context.Background(), t, "CRTX_X402", "@x402/extensions", "x402-discovery.mjs",
		"CRTX_URL="+x.d.URL, "CRTX_PAGE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("bazaar client: %s%s", stdout.Bytes(), stderr.Bytes())
	if err != nil {
		t.Fatalf("the bazaar client failed: %v", err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the bazaar client printed %q: %v", stdout.Bytes(), err)
	}
	wantURLs := []string{x.d.URL + "/v1/agents/" + used + "/execute", x.d.URL + "/v1/agents/" + finance + "/execute"}
	if out.Total != 2 || !slices.Equal(out.Resources, wantURLs) || len(out.Problems) != 0 {
		t.Errorf("the bazaar client read %+v", out)
	}
}

// TestDiscoveryWithoutChain: where no environment has a chain, no agent can
// be paid with x402, and the list is empty, as a Bazaar client expects of
// a facilitator with nothing to offer, rather than an error.
func TestDiscoveryWithoutChain(t *testing.T) {
	m := newMarket(t, "0")
	m.list(newService(t, echo), "0.02")
	if p := discovered(t, m.env, "?limit=5"); p.X402Version != 2 || len(p.Items) != 0 ||
		p.Pagination != (api.Page{Total: 0, Limit: 5, Offset: 0}) {
		t.Errorf("without a chain: %+v", p)
	}
}
