package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

type homeData struct {
	Page                 api.AgentPage
	Q, Sort, Env         string
	Tags                 []string
	Verified             bool
	Standard             []string
	Sorts                []string
	Prev, Next           string
	First, Last, Total   int
	ActiveTag, TagsQuery string
}

// home is the marketplace: search, tag filters, sorts and pages, all as
// links and a GET form, so it reads and works without JavaScript.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	aq := crtx.AgentQuery{Q: q.Get("q"), Sort: q.Get("sort"), Limit: 12, VerifiedOnly: q.Get("verified_only") == "true"}
	if !slices.Contains([]string{"", crtx.SortTotalExecutions, crtx.SortSuccessRate, crtx.SortPriceAsc, crtx.SortPriceDesc, crtx.SortCreatedAt}, aq.Sort) {
		aq.Sort = ""
	}
	if t := q.Get("tag"); t != "" {
		aq.Tags = []string{t}
	}
	aq.Environment = crtx.Mainnet
	if q.Get("environment") == "devnet" {
		aq.Environment = crtx.Devnet
	}
	aq.Offset, _ = strconv.Atoi(q.Get("offset"))
	aq.Offset = max(aq.Offset, 0)
	page, err := h.market.Agents(r.Context(), aq)
	if err != nil {
		return err
	}
	d := homeData{Page: page, Q: aq.Q, Sort: aq.Sort, Env: string(aq.Environment), Tags: aq.Tags, Verified: aq.VerifiedOnly,
		Standard: crtx.StandardTags, Sorts: []string{"total_executions", "success_rate", "price_asc", "price_desc", "created_at"},
		Total: page.Total, First: aq.Offset + 1, Last: aq.Offset + len(page.Agents), ActiveTag: q.Get("tag")}
	link := func(offset int) string {
		v := url.Values{}
		for k, vals := range q {
			v[k] = vals
		}
		v.Set("offset", strconv.Itoa(offset))
		return "/?" + v.Encode()
	}
	if aq.Offset > 0 {
		d.Prev = link(max(aq.Offset-aq.Limit, 0))
	}
	if aq.Offset+aq.Limit < page.Total {
		d.Next = link(aq.Offset + aq.Limit)
	}
	v, _ := h.session(r)
	return h.render(w, "home", v.page("crtx — agents", d))
}

type agentData struct {
	Agent        api.AgentListing
	Devnet       api.AgentListing
	URL          string
	Example      string
	InputSchema  string
	OutputSchema string
	// The marketplace's MCP endpoint, Claude Code's command and other
	// clients' configuration for it, and this agent's A2A card.
	MCPURL, MCPAdd, MCPConfig, CardURL string
}

// agent is one listing: what it does, its schemas, price, statistics in
// both environments, its ledger account, and how to call it over REST,
// the command line, MCP and A2A.
func (h *Handler) agent(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	a, err := h.market.Agent(r.Context(), id, crtx.Mainnet)
	if err != nil {
		return err
	}
	dev, err := h.market.Agent(r.Context(), id, crtx.Devnet)
	if err != nil {
		return err
	}
	base := h.market.Config().PublicURL
	v, _ := h.session(r)
	return h.render(w, "agent", v.page(a.Name+" — crtx", agentData{Agent: a, Devnet: dev, URL: base,
		Example: "Hello", InputSchema: string(a.InputSchema), OutputSchema: string(a.OutputSchema),
		MCPURL: api.MCPURL(base), MCPAdd: api.ClaudeMCPAdd(base, "crtx_test_…"), MCPConfig: api.MCPServers(base, "<your API key>", "  "),
		CardURL: api.CardURL(base, a.AgentID)}))
}
