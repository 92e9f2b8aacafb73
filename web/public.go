package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/shell"
)

type homeData struct {
	Page               api.AgentPage
	Q, Sort, Env       string
	Verified           bool
	Sorts              []sortChoice
	Prev, Next         string
	First, Last, Total int
	ActiveTag          string
	query              url.Values
	// Tags are the tags that have listed agents, with how many, the most
	// used first (and the active one, whatever its count).
	Tags []tagCount
	// Devnet holds devnet's statistics of the cards without a run in the
	// environment shown, when devnet has some: said as devnet's, not "new".
	Devnet map[string]*api.AgentListing
	// Intro says the page opens the marketplace: no search, filter or page.
	Intro bool
}

// tagCount is a tag of the catalog and how many listed agents have it.
type tagCount struct {
	Tag string
	N   int
}

// sortChoice is a sort of the catalog as a person reads it.
type sortChoice struct{ Value, Label string }

var sorts = []sortChoice{{crtx.SortTotalExecutions, "Most used"}, {crtx.SortSuccessRate, "Most reliable"},
	{crtx.SortPriceAsc, "Cheapest first"}, {crtx.SortPriceDesc, "Priciest first"}, {crtx.SortCreatedAt, "Newest"}}

// TagURL is the catalog filtered by tag ("" for every tag), keeping the
// search, sort and other filters, from the first page.
func (d homeData) TagURL(tag string) string {
	v := url.Values{}
	for k, vals := range d.query {
		v[k] = vals
	}
	v.Del("offset")
	v.Del("tag")
	if tag != "" {
		v.Set("tag", tag)
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// Filtered reports whether the catalog is narrowed by anything.
func (d homeData) Filtered() bool { return d.Q != "" || d.ActiveTag != "" || d.Verified }

// home is the marketplace: search, tag filters, sorts and pages, all as
// links and a GET form, so it reads and works without JavaScript.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	aq := crtx.AgentQuery{Q: q.Get("q"), Sort: q.Get("sort"), Limit: 12, VerifiedOnly: q.Get("verified_only") == "true"}
	if !slices.ContainsFunc(sorts, func(s sortChoice) bool { return s.Value == aq.Sort }) {
		aq.Sort = "" // best match with a search, else the default
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
	p, err := h.market.Catalog.Agents(r.Context(), aq)
	if err != nil {
		return err
	}
	page := api.NewAgentPage(p)
	d := homeData{Page: page, Q: aq.Q, Sort: aq.Sort, Env: string(aq.Environment), Verified: aq.VerifiedOnly,
		Sorts: sorts, Total: page.Total, First: aq.Offset + 1, Last: aq.Offset + len(page.Agents),
		ActiveTag: q.Get("tag"), query: q}
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
	counts, err := h.market.Catalog.TagCounts(r.Context())
	if err != nil {
		return err
	}
	for tag, n := range counts {
		d.Tags = append(d.Tags, tagCount{tag, n})
	}
	if d.ActiveTag != "" && counts[d.ActiveTag] == 0 {
		d.Tags = append(d.Tags, tagCount{d.ActiveTag, 0})
	}
	slices.SortFunc(d.Tags, func(a, b tagCount) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Tag, b.Tag)) })
	if aq.Environment == crtx.Mainnet {
		var none []string // the cards mainnet has no run for
		for _, a := range page.Agents {
			if a.TotalExecutions == 0 {
				none = append(none, a.AgentID)
			}
		}
		dev, err := h.market.Catalog.Figures(r.Context(), crtx.Devnet, none)
		if err != nil {
			return err
		}
		for id, it := range dev {
			if it.Stats.Total > 0 {
				if d.Devnet == nil {
					d.Devnet = map[string]*api.AgentListing{}
				}
				l := api.NewAgentListing(it, crtx.Devnet, h.market.Links())
				d.Devnet[id] = &l
			}
		}
	}
	d.Intro = !d.Filtered() && aq.Offset == 0 && aq.Sort == ""
	v := h.visitor(r)
	return h.render(w, "home", v.page("crtx — agents", d))
}

type agentData struct {
	Agent  api.AgentListing
	Devnet api.AgentListing
	URL    string
	// Params are the agent's parameters; the snippets send Example, its
	// required ones filled, as JSON (Parameters) and as CLI flags (Flags).
	Params               []param
	Parameters, CurlBody string
	Flags                []string
	Keys                 []crtx.APIKey
	Try                  map[string]string
	// Fields say what is wrong with each try-it field the last run refused.
	Fields  map[string]string
	Example string
	// Run is the visitor's run the page shows (its address's run=), and
	// Now the time the page is made at, for the run's clock.
	Run *runView
	Now time.Time
	// Short is how much devnet USDC the visitor lacks for one run, where
	// the devnet airdrop can add it (0 otherwise).
	Short crtx.USDC
	// AirdropAmount is what the page's airdrop button adds.
	AirdropAmount crtx.USDC
	// Runs are its public runs per day over 30 days, on mainnet, or on
	// devnet while mainnet has none.
	Runs *runsChart
	// More are the creator's other agents in the catalog.
	More []crtx.Agent
	// Real is a real run of the agent, by its creator, that the page
	// shows as its example (nil without one).
	Real *market.Example
	// Samples are the programs that run it once, by language.
	Samples []codeSample
	// The marketplace's MCP endpoint, Claude Code's command and other
	// clients' configuration for it, and this agent's A2A card.
	MCPURL, MCPAdd, MCPConfig, CardURL string
	// X402 is set when an environment has a chain: the agent can be paid
	// per call with x402, as the snippets show.
	X402                           bool
	X402Fetch, X402Python, X402CLI string
	// MCPX402URL is the MCP endpoint paid per call with x402, when an
	// environment has a chain to pay on ("" otherwise).
	MCPX402URL string
}

// agent is one listing as a product page: what it does, its parameters,
// price and statistics in both environments, a form to try it for a
// signed-in caller, and how to call it over REST, the command line, MCP
// and A2A with snippets that run as pasted.
func (h *Handler) agent(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	main, err := h.market.Catalog.Agent(r.Context(), id, crtx.Mainnet)
	if err != nil {
		return err
	}
	dev, err := h.market.Catalog.Agent(r.Context(), id, crtx.Devnet)
	if err != nil {
		return err
	}
	a := api.NewAgentListing(main, crtx.Mainnet, h.market.Links())
	base := h.market.Config().PublicURL
	v := h.visitor(r)
	d := agentData{Agent: a, Devnet: api.NewAgentListing(dev, crtx.Devnet, h.market.Links()), URL: base, Example: "Hello",
		MCPURL: api.MCPURL(base), MCPAdd: api.ClaudeMCPAdd(base, "crtx_test_…"), MCPConfig: api.MCPServers(base, "<your API key>", "  "),
		CardURL: api.CardURL(base, a.AgentID)}
	if len(h.market.Config().Chains) > 0 {
		d.MCPX402URL = api.MCPX402URL(base)
	}
	var example map[string]any
	d.Params, example = params(a.InputSchema)
	if d.Real, err = h.market.Catalog.AgentExample(r.Context(), a.AgentID, a.Creator.Pubkey); err != nil {
		return err
	}
	// The listing's example fills the form and the snippets: its endpoint
	// test ran it. Else the creator's own latest run does; its output
	// stands beside the form when it is a run of the example shown.
	givenRaw := json.RawMessage(nil)
	switch {
	case a.ExampleTask != "":
		d.Example, givenRaw = a.ExampleTask, a.ExampleParameters
		if d.Real != nil && (d.Real.Task != a.ExampleTask || !sameJSON(d.Real.Parameters, a.ExampleParameters)) {
			d.Real = nil
		}
	case d.Real != nil:
		d.Example, givenRaw = d.Real.Task, d.Real.Parameters
	}
	var given map[string]any
	if json.Unmarshal(givenRaw, &given) == nil && given != nil {
		example = given
	}
	b, _ := json.Marshal(example)
	d.Parameters = string(b)
	body, _ := json.Marshal(map[string]any{"task": d.Example, "parameters": json.RawMessage(b)})
	d.CurlBody = shell.Quote(string(body))
	for _, k := range slices.Sorted(maps.Keys(example)) {
		d.Flags = append(d.Flags, shell.Quote(k+"="+shown(example[k])))
	}
	curl := "curl -s -X POST " + base + "/v1/agents/" + a.AgentID + "/execute \\\n" +
		"  -H \"Authorization: Bearer $CRTX_API_KEY\" -H 'Content-Type: application/json' \\\n  -d " + d.CurlBody
	cli := "CRTX_URL=" + base + " crtx run " + a.AgentID + " " + shell.Quote(d.Example)
	for _, f := range d.Flags {
		cli += " --param " + f
	}
	d.Samples = callSamples(base, a.AgentID, d.Example, example, curl, cli)
	if len(h.market.Config().Chains) > 0 {
		d.X402 = true
		d.X402Fetch, d.X402Python, d.X402CLI = x402Snippets(base+"/v1/agents/"+a.AgentID+"/execute", string(body), a.AgentID, d.Example, d.Flags,
			payingRPC(h.market.Config().Chains))
	}
	for _, env := range []crtx.Environment{crtx.Mainnet, crtx.Devnet} {
		rows, err := h.market.Catalog.AgentRuns(r.Context(), a.AgentID, env)
		if err != nil {
			return err
		}
		if d.Runs = newRunsChart(env, rows, h.market.Now()); d.Runs != nil {
			break
		}
	}
	others, err := h.market.Listings.CreatorListings(r.Context(), a.Creator.Pubkey)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.ID != a.AgentID && o.Status == crtx.AgentActive && o.SuspendedAt == nil {
			d.More = append(d.More, o)
		}
	}
	out := h.outcome(r, v)
	d.Try, d.Fields, d.Now = out.Form, out.Fields, v.at
	if v.Wallet != "" {
		// The page names the caller's keys and runs: kept out of caches as
		// a dashboard is.
		w.Header().Set("Cache-Control", "no-store")
		keys, err := h.market.Accounts.Keys(r.Context(), v.Wallet)
		if err != nil {
			return err
		}
		d.Keys = slices.DeleteFunc(keys, func(k crtx.APIKey) bool { return k.RevokedAt != nil || k.Client != "" || k.Name == pageKeyName })
		if from := r.URL.Query().Get("from"); from != "" && d.Try == nil {
			// "Run again" from an execution: its task and parameters.
			e, _, err := h.ownExecution(r.Context(), v.Wallet, from)
			if err != nil && crtx.ErrorCode(err) != crtx.CodeExecutionNotFound {
				return err
			}
			if err == nil && e.AgentID == a.AgentID {
				d.Try = exampleForm(e.Task, e.Parameters)
			}
		}
		if id := r.URL.Query().Get("run"); id != "" {
			if d.Run, err = h.runOf(r.Context(), v.Wallet, a.AgentID, id); err != nil {
				return err
			}
		}
		if h.market.Chain(crtx.Devnet) == nil {
			b, err := h.market.Funds.Balances(r.Context(), v.Wallet, crtx.Devnet)
			if err != nil {
				return err
			}
			hold := a.Hold()
			d.Short = max(hold-b[crtx.Devnet].Available, 0)
			d.AirdropAmount = min(max(crtx.MicroPerUSDC, hold), h.market.Config().AirdropMax)
		}
	}
	if d.Try == nil && d.Real != nil {
		d.Try = exampleForm(d.Real.Task, d.Real.Parameters)
	}
	p := v.page(a.Name+" — crtx", d).with(out)
	p.Description = a.Name + " on crtx: " + a.Tagline
	return h.render(w, "agent", p)
}

// tryAgent runs the agent from its page's form, charged to one of the
// caller's API keys or, by default, to the agent pages' devnet key (no key
// to make first), and lands back on the page with the run below the form.
// The page's script asks for the run to be asynchronous, and the page then
// follows it; without the script the run is synchronous and the page lands
// with its outcome.
func (h *Handler) tryAgent(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	id := r.PathValue("id")
	it, err := h.market.Catalog.Agent(r.Context(), id, crtx.Mainnet)
	if err != nil {
		return outcome{}, err
	}
	a := it.Agent
	typed := map[string]string{"task": r.PostFormValue("task"), "key_id": r.PostFormValue("key_id")}
	ps, _ := params(a.InputSchema)
	for _, p := range ps {
		typed["param."+p.Name] = r.PostFormValue("param." + p.Name)
	}
	page := "/agents/" + url.PathEscape(id) + "#try"
	refuse := func(err error) (outcome, error) {
		if !isUserError(err) {
			return outcome{}, err
		}
		out := refused(formFields(err), typed, page)
		if out.Error == mendFields {
			out.Error = "Nothing was run or charged: mend the fields marked below."
		}
		return out, nil
	}
	raw, err := formParams(ps, r.PostFormValue)
	if err != nil {
		return refuse(err)
	}
	key, err := h.pageKey(r.Context(), v.Wallet, typed["key_id"])
	if err != nil {
		return refuse(err)
	}
	e, err := h.market.Executions.Execute(r.Context(), crtx.Principal{Wallet: v.Wallet, Key: key}, id,
		crtx.ExecuteParams{Task: typed["task"], Parameters: raw, Async: r.PostFormValue("async") == "1"}, "", "")
	var ce *crtx.Error
	if errors.As(err, &ce) && ce.ExecutionID != "" {
		return outcome{Error: message(err), Form: typed, Landing: runLanding(id, ce.ExecutionID)}, nil
	}
	if err != nil {
		return refuse(err)
	}
	out := outcome{Form: typed, Landing: runLanding(id, e.ID)}
	if e.Status == crtx.ExecFailed {
		// The money came back: say so, not that it was spent.
		out.Error = "Failed — " + e.Cost.String() + " USDC refunded. " + sentence(e.ErrorMessage)
	} else if e.Status == crtx.ExecCompleted {
		out.Notice = "Ran " + a.Name + " on " + string(e.Environment) + " for " + e.Cost.String() + " USDC."
	}
	return out, nil
}

// formFields names the try-it form's fields in err's field errors: the
// API's "parameters.<name>" is the form's "param.<name>".
func formFields(err error) error {
	fields := crtx.FieldErrors(err)
	if len(fields) == 0 {
		return err
	}
	errs := make([]error, len(fields))
	for i, f := range fields {
		name := f.Field
		if p, ok := strings.CutPrefix(name, "parameters."); ok {
			name = "param." + p
		}
		errs[i] = crtx.InvalidField(name, "%s", strings.TrimPrefix(f.Message, f.Field+": "))
	}
	return errors.Join(errs...)
}

// exampleForm is the try-it form filled with a run's task and parameters.
func exampleForm(task string, parameters json.RawMessage) map[string]string {
	form := map[string]string{"task": task}
	var ps map[string]any
	json.Unmarshal(parameters, &ps)
	for k, val := range ps {
		form["param."+k] = shown(val)
	}
	return form
}

// sameJSON says whether a and b hold the same parameters: the same value,
// none and an empty object alike.
func sameJSON(a, b json.RawMessage) bool {
	var x, y map[string]any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	if len(x) == 0 && len(y) == 0 {
		return true
	}
	return reflect.DeepEqual(x, y)
}
