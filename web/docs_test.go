package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	crtxhttp "github.com/crtx-market/crtx/http"
)

const docsBase = "https://crtx.example.com"

// docsPage renders /docs from the server's own openapi.json.
func docsPage(t *testing.T) string {
	t.Helper()
	h := &Handler{pages: map[string]*template.Template{"docs": parsePage("docs")}}
	p, err := h.buildDocs(crtxhttp.OpenAPI(), docsBase, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.execute("docs", p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the HTML of the element with id, up to the next section.
func section(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("the docs page has no anchor %q", id)
	}
	rest := page[i:]
	if j := strings.Index(rest, "<section"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// specOp is what the tests need to know of an operation of openapi.json.
type specOp struct {
	Security []map[string][]string `json:"security"`
	CLI      []string              `json:"x-crtx-cli"`
}

// specOps lists the document's operations by operationId.
func specOps(t *testing.T) map[string]specOp {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(crtxhttp.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	ops := map[string]specOp{}
	for _, item := range doc.Paths {
		for _, raw := range item {
			var op struct {
				ID string `json:"operationId"`
				specOp
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			ops[op.ID] = op.specOp
		}
	}
	return ops
}

// What callers use comes first, in the order a newcomer meets it; the
// operator's endpoints come last.
func TestDocsOrder(t *testing.T) {
	page := docsPage(t)
	var tags []string
	for _, m := range regexp.MustCompile(`<section id="tag-([a-z-]+)"`).FindAllStringSubmatch(page, -1) {
		tags = append(tags, m[1])
	}
	want := []string{"sign-in", "keys", "agents", "executions", "funding", "creators", "ledger", "oauth", "operations", "admin"}
	if !slices.Equal(tags, want) {
		t.Errorf("sections %v, want %v", tags, want)
	}
	agents := strings.Index(page, `id="listAgents"`)
	admin := strings.Index(page, "/v1/admin/")
	if agents < 0 || admin < 0 || agents > admin {
		t.Errorf("GET /v1/agents at %d, the first /v1/admin/ path at %d: the admin endpoints must come last", agents, admin)
	}
	from, to := strings.Index(page, `id="tag-agents"`), strings.Index(page, `id="tag-executions"`)
	for _, id := range []string{"listAgents", "getAgent", "executeAgent"} {
		if at := strings.Index(page, `id="`+id+`"`); at < from || at > to {
			t.Errorf("%s is not among the agents", id)
		}
	}
}

// Every operation is anchored at its operationId, and every link of the
// page leads to an anchor on it.
func TestDocsAnchors(t *testing.T) {
	page := docsPage(t)
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("two elements have the id %q", m[1])
		}
		ids[m[1]] = true
	}
	for id := range specOps(t) {
		if !strings.Contains(page, `<section class="op" id="`+id+`">`) {
			t.Errorf("operation %s has no anchor", id)
		}
	}
	for _, m := range regexp.MustCompile(`href="#([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !ids[m[1]] {
			t.Errorf("the link to #%s leads nowhere", m[1])
		}
	}
}

// Schemas are tables whose types link to the schemas they name: no $ref
// is left for the reader to look up by hand.
func TestDocsSchemas(t *testing.T) {
	page := docsPage(t)
	for _, raw := range []string{"$ref", "#/components/"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page shows %q unlinked", raw)
		}
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(crtxhttp.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for name := range doc.Components.Schemas {
		if s := section(t, page, "schema-"+name); !strings.Contains(s, "<th>field</th>") || !strings.Contains(s, "<tr><td><code>") {
			t.Errorf("schema %s has no table of fields, or an empty one", name)
		}
	}
	// Each $ref of the document is a link where it is used.
	refs := regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(string(crtxhttp.OpenAPI()), -1)
	if len(refs) == 0 {
		t.Fatal("found no $ref in openapi.json to check")
	}
	for _, m := range refs {
		if !strings.Contains(page, `<a href="#schema-`+m[1]+`">`+m[1]+`</a>`) {
			t.Errorf("no link to schema %s", m[1])
		}
	}
	// Nested refs and arrays of refs link too, with enums and formats.
	for schema, want := range map[string][]string{
		"AgentPage":       {`array of <a href="#schema-AgentSummary">AgentSummary</a>`},
		"Wallet":          {`<code>balances.devnet</code>`, `<a href="#schema-Balance">Balance</a>`},
		"ExecutionRecord": {"one of: pending, running, completed, failed, disputed", "format: date-time", "<code>dispute.dispute_id</code>"},
		"CreatorAgent":    {`All the fields of <a href="#schema-Agent">Agent</a>`, "<code>endpoint_url</code>"},
		"Environment":     {"one of: mainnet, devnet"},
	} {
		s := section(t, page, "schema-"+schema)
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("schema %s lacks %s", schema, w)
			}
		}
	}
}

// Each call shows a curl line with the credential it needs, the crtx
// command that does the same where there is one, and an example response.
func TestDocsExamples(t *testing.T) {
	page := docsPage(t)
	header := map[string]string{"apiKey": "$CRTX_API_KEY", "session": "$CRTX_SESSION", "adminToken": "$CRTX_ADMIN_TOKEN"}
	for id, op := range specOps(t) {
		s := section(t, page, id)
		curl := regexp.MustCompile(`(?s)<pre [^>]*class="curl"[^>]*>curl [^<]*` + regexp.QuoteMeta(docsBase) + `/[^<]*</pre>`).FindString(s)
		if curl == "" {
			t.Errorf("%s has no curl line against the marketplace", id)
			continue
		}
		_, curl, _ = strings.Cut(curl, ">") // the line, not its tag
		if len(op.Security) > 0 {
			for scheme := range op.Security[0] {
				if !strings.Contains(curl, "Authorization: Bearer "+header[scheme]) {
					t.Errorf("%s: the curl line lacks the %s credential:\n%s", id, scheme, curl)
				}
			}
		} else if strings.Contains(curl, "Authorization") {
			t.Errorf("%s needs no credential, yet its curl line sends one", id)
		}
		if url, _, _ := strings.Cut(curl, " \\\n"); strings.Contains(url, "{") {
			t.Errorf("%s: a path parameter is left unfilled:\n%s", id, curl)
		}
		for i, cli := range op.CLI {
			if !strings.Contains(s, `<pre tabindex="0" class="cli" id="`+id+`-cli-`+strconv.Itoa(i)+`">`+template.HTMLEscapeString(cli)+`</pre>`) {
				t.Errorf("%s lacks its command line %s", id, cli)
			}
		}
		if id != "deleteSession" && id != "revokeOAuthToken" && !strings.Contains(s, "<p>→ 2") {
			t.Errorf("%s has no example response", id)
		}
	}
	// Parameters are a table with what each takes; each call names its credential.
	for id, want := range map[string][]string{
		"listAgents":   {"<td><code>sort</code></td><td>query</td>", "one of: total_executions, success_rate, price_asc, price_desc, created_at", "<td><code>q</code></td>", "credential: none"},
		"executeAgent": {"<td><code>agent_id</code></td><td>path</td>", "<td><code>Idempotency-Key</code></td><td>header</td>", "credential: API key (apiKey)"},
		"createKey":    {"credential: session token (session)"},
	} {
		s := section(t, page, id)
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%s lacks %s", id, w)
			}
		}
	}
	exec := section(t, page, "executeAgent")
	for _, want := range []string{"-d &#39;{", "&#34;task&#34;", "crtx run agt_", "→ 202"} {
		if !strings.Contains(exec, want) {
			t.Errorf("executeAgent lacks %s", want)
		}
	}
}

// The page is read without JavaScript, in the site's layout: its one
// script is the site's, which only turns the examples into tabs with copy
// buttons; every example is in the page as served.
func TestDocsNoScript(t *testing.T) {
	page := docsPage(t)
	scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1)
	if len(scripts) != 1 || scripts[0] != `<script src="/static/app.js" defer>` || !strings.Contains(page, `<a class="brand" href="/">crtx</a>`) {
		t.Errorf("the docs page runs %v, or is not in the site's layout", scripts)
	}
}

// Getting started points MCP and A2A clients, and x402 buyers' Bazaar
// clients, at this marketplace.
func TestDocsIntegrations(t *testing.T) {
	s := section(t, docsPage(t), "getting-started")
	for _, want := range []string{"<code>" + docsBase + "/mcp</code>", "<code>run_agent</code>", "<code>" + docsBase + "/a2a/AGENT_ID</code>",
		"<code>" + docsBase + "/discovery/resources</code>", `<a href="#listDiscoveryResources">`} {
		if !strings.Contains(s, want) {
			t.Errorf("getting started lacks %s", want)
		}
	}
}

// BenchmarkDocs renders /docs as each request does: the content rendered
// at start under a visitor's header.
func BenchmarkDocs(b *testing.B) {
	h := &Handler{pages: map[string]*template.Template{"docs": parsePage("docs")}}
	p, err := h.buildDocs(crtxhttp.OpenAPI(), docsBase, 100)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.execute("docs", p); err != nil {
			b.Fatal(err)
		}
	}
}

// The examples' ids exist on no marketplace: each example with one says
// where to get a real id, and a curl line with an API key where the key
// comes from.
func TestDocsSampleSources(t *testing.T) {
	page := docsPage(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(crtxhttp.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, ops := range doc.Paths {
		for _, raw := range ops {
			var op struct {
				ID         string `json:"operationId"`
				Parameters []struct {
					Name, In string
					Example  any
				}
			}
			if json.Unmarshal(raw, &op) != nil || op.ID == "" {
				continue
			}
			s := section(t, page, op.ID)
			for _, p := range op.Parameters {
				if p.In != "path" || !strings.HasSuffix(p.Name, "_id") {
					continue
				}
				checked++
				want := template.HTMLEscapeString(fmt.Sprintf("%v is a sample %s: take one from ", p.Example, p.Name))
				if !strings.Contains(s, want) {
					t.Errorf("%s does not say where to get a real %s", op.ID, p.Name)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d id parameters", checked)
	}
	exec := section(t, page, "executeAgent")
	for _, want := range []string{"crtx agents list", "crtxd dev prints one in its banner", "$CRTX_API_KEY is a key of yours", "crtx keys create"} {
		if !strings.Contains(exec, want) {
			t.Errorf("executeAgent lacks %q", want)
		}
	}
	if s := section(t, page, "getting-started"); !strings.Contains(s, "the banner prints an agent id and a devnet API key") {
		t.Error("getting started does not say where the examples' ids come from")
	}
}
