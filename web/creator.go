package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
)

// chart is the earnings per day as the bars of an inline SVG, with its axes.
type chart struct {
	Bars        []bar
	First, Last string // the dates at the ends of the x axis
	Max, Half   string // the y axis's marks, in USDC
}

type bar struct {
	X, Y, W, H  int
	Date, Value string
	Label       string
}

// earningsChart draws earnings per day over the span days ending today, a
// bar for each day (0 on a day without earnings), so that the axis is the
// same whatever the history; nil without any earnings in the span.
func earningsChart(all []crtx.DayEarnings, today time.Time, span int) *chart {
	by := map[string]crtx.USDC{}
	var top crtx.USDC
	for _, day := range all {
		by[day.Date] = day.Earned
	}
	axis := dayAxis(today, span)
	for _, day := range axis {
		top = max(top, by[day.Date])
	}
	if top == 0 {
		return nil
	}
	c := &chart{First: axis[0].Date, Last: axis[span-1].Date, Max: top.String(), Half: (top / 2).String()}
	for _, day := range axis {
		earned := by[day.Date]
		h := int(int64(earned) * 110 / int64(top))
		c.Bars = append(c.Bars, bar{X: day.X, Y: 120 - h, W: day.W, H: h, Date: day.Date, Value: earned.String(),
			Label: day.Date + ": " + earned.String() + " USDC"})
	}
	return c
}

// consoleTabs are the creator console's parts, each a page of its own.
var consoleTabs = []struct{ Value, Label string }{{"overview", "Overview"}, {"listings", "Listings"}, {"new", "New listing"},
	{"test", "Key & test"}, {"receipts", "Receipts"}, {"disputes", "Disputes"}}

type creatorData struct {
	// Tab is the part of the console shown, and Env the environment every
	// part shows, kept by its links and forms.
	Tab      string
	Env      crtx.Environment
	Span     int
	Agents   []api.CreatorAgent
	Earnings crtx.Earnings
	// Earned is each agent's settled earnings in Env.
	Earned     map[string]crtx.USDC
	Chart      *chart
	Executions []api.ExecutionSummary
	Disputes   []api.DisputeInfo
	Form       map[string]string
	Fields     map[string]string // what is wrong with each field of Form
	Report     *api.TestReport
	// Test holds the Test Execution tool's inputs, kept with its report.
	Test map[string]string
	// ListingNonce is the one-time nonce the listing form's statement
	// names, new with each page (docs/creators.md), and Marketplace the
	// host the statement names with it.
	ListingNonce, Marketplace string
	// Summary lists the listing form's fields at fault, in the form's
	// order, for the summary above it; Steps are the form's steps.
	Summary []fieldFault
	Steps   []listingStep
	// Tiers are the collateral a listing locks by price (TiersJSON for the
	// page's script), from MainnetBalance.
	Tiers          []collateralTier
	TiersJSON      string
	MainnetBalance crtx.USDC
}

// fieldFault is one field of the listing form at fault, as its summary
// names it: by its label, with the step it is in.
type fieldFault struct {
	Field, Label, Message string
	Step                  int
}

// listingStep is one step of the listing form.
type listingStep struct {
	N     int
	Label string
}

// collateralTier is what a listing priced up to UpTo locks (UpTo 0: above
// the tiers before).
type collateralTier struct{ Lock, UpTo crtx.USDC }

// listingLabels are the listing form's fields as a person reads them, in
// the form's order, with their steps.
var listingLabels = []struct {
	Field, Label string
	Step         int
}{
	{"name", "Name", 1}, {"tagline", "Tagline", 1}, {"description", "Description", 1}, {"tags", "Tags", 1},
	{"input_schema", "Input schema", 1}, {"output_schema", "Output schema", 1},
	{"example_task", "Example task", 1}, {"example_parameters", "Example parameters", 1},
	{"endpoint_url", "Endpoint URL", 2}, {"signing_public_key", "Signing public key", 2}, {"key_signature", "The agent's key file", 2},
	{"pricing_model", "Priced", 3}, {"price_per_call_usdc", "Price per call", 3},
	{"price_per_1k_tokens_usdc", "Price per 1,000 tokens", 3}, {"max_price_per_call_usdc", "Most per call", 3},
	{"timeout_seconds", "Timeout", 3},
}

// listingSteps are the listing form's steps, in order.
var listingSteps = []listingStep{{1, "Details"}, {2, "Endpoint and key"}, {3, "Price and collateral"}, {4, "Review"}}

// faults is the summary of fields, a form's faults by field.
func faults(fields map[string]string) []fieldFault {
	var out []fieldFault
	for _, l := range listingLabels {
		if m, ok := fields[l.Field]; ok {
			out = append(out, fieldFault{l.Field, l.Label, m, l.Step})
		}
	}
	return out
}

// Tabs are the console's parts, as links that keep the environment.
func (d creatorData) Tabs() []link {
	var out []link
	for _, t := range consoleTabs {
		out = append(out, link{consoleURL(t.Value, d.Env, ""), t.Label})
	}
	return out
}

// Here is the console's address for tab, in this environment.
func (d creatorData) Here(tab string) string { return consoleURL(tab, d.Env, "") }

// In is this tab's address in env.
func (d creatorData) In(env crtx.Environment) string { return consoleURL(d.Tab, env, "") }

// consoleURL is the creator console showing tab in env, at anchor.
func consoleURL(tab string, env crtx.Environment, anchor string) string {
	u := "/dashboard/creator?tab=" + url.QueryEscape(tab) + "&environment=" + url.QueryEscape(string(env))
	if anchor != "" {
		u += "#" + anchor
	}
	return u
}

// consoleLanding is where a console form goes back to: tab, in the
// environment the form was sent from.
func consoleLanding(r *http.Request, tab, anchor string) string {
	env, err := crtx.ParseEnvironment("environment", r.PostFormValue("environment"))
	if err != nil {
		env = crtx.Mainnet
	}
	return consoleURL(tab, env, anchor)
}

// creator is the creator console, in parts (consoleTabs): an overview of
// earnings and each agent's runs, the listings and their actions, the
// listing form with the signing-key generator, the Test Execution tool,
// receipts and disputes to answer, all in one environment chosen once.
func (h *Handler) creator(w http.ResponseWriter, r *http.Request, v visit) error {
	ctx := r.Context()
	q := r.URL.Query()
	d := creatorData{Tab: "overview", Span: 30}
	for _, t := range consoleTabs {
		if q.Get("tab") == t.Value {
			d.Tab = t.Value
		}
	}
	if q.Get("days") == "7" {
		d.Span = 7
	}
	var err error
	switch q.Get("environment") {
	case "mainnet", "devnet":
		d.Env = crtx.Environment(q.Get("environment"))
		if d.Earnings, err = h.market.Funds.CreatorEarnings(ctx, v.Wallet, d.Env); err != nil {
			return err
		}
	default:
		// Mainnet, unless only devnet has earned anything yet: a creator
		// trying things out sees the runs they made.
		d.Env = crtx.Mainnet
		if d.Earnings, err = h.market.Funds.CreatorEarnings(ctx, v.Wallet, crtx.Mainnet); err != nil {
			return err
		}
		if d.Earnings.Executions == 0 {
			dev, err := h.market.Funds.CreatorEarnings(ctx, v.Wallet, crtx.Devnet)
			if err != nil {
				return err
			}
			if dev.Executions > 0 {
				d.Env, d.Earnings = crtx.Devnet, dev
			}
		}
	}
	agents, err := h.market.Listings.CreatorAgents(ctx, v.Wallet, d.Env)
	if err != nil {
		return err
	}
	d.Agents = api.NewCreatorAgentList(agents, h.market.Links()).Agents
	if d.Earned, err = h.market.Funds.EarningsByAgent(ctx, v.Wallet, d.Env); err != nil {
		return err
	}
	list, _, err := h.market.Executions.Executions(ctx, crtx.ExecutionQuery{Creator: v.Wallet, Environment: d.Env, Limit: 20})
	if err != nil {
		return err
	}
	disputes, err := h.market.Disputes.Disputes(ctx, crtx.DisputeQuery{Creator: v.Wallet, Limit: 100})
	if err != nil {
		return err
	}
	var nonce crtx.ListingNonce
	if d.Tab == "new" {
		if nonce, err = h.formNonce(ctx, v.Wallet); err != nil {
			return err
		}
	}
	out := h.outcome(r, v)
	d.Report, d.Form, d.Fields, d.ListingNonce, d.Marketplace = out.Report, out.Form, out.Fields, nonce.Nonce, nonce.Marketplace
	for _, e := range list {
		d.Executions = append(d.Executions, api.NewExecutionSummary(e, h.market.Links()))
	}
	for _, ds := range disputes {
		if ds.Environment == d.Env {
			d.Disputes = append(d.Disputes, api.NewDisputeInfo(ds))
		}
	}
	d.Chart = earningsChart(d.Earnings.Days, v.at, d.Span)
	d.Summary, d.Steps = faults(d.Fields), listingSteps
	tiers := h.market.Config().CollateralTiers
	for i, t := range tiers {
		ct := collateralTier{Lock: t.Collateral, UpTo: t.MaxPrice}
		if i == len(tiers)-1 {
			ct.UpTo = 0
		}
		d.Tiers = append(d.Tiers, ct)
	}
	js, _ := json.Marshal(tiers)
	d.TiersJSON = string(js)
	b, err := h.market.Funds.Balances(ctx, v.Wallet, crtx.Mainnet)
	if err != nil {
		return err
	}
	d.MainnetBalance = b[crtx.Mainnet].Available
	if d.Form == nil || d.Report != nil {
		d.Form = map[string]string{"pricing_model": "pay_per_use", "input_schema": `{"type": "object", "properties": {}}`,
			"output_schema": `{"type": "string"}`, "timeout_seconds": "60"}
	}
	if d.Report != nil {
		d.Test = out.Form
	}
	return h.render(w, "creator", v.page("Creator — crtx", d).with(out))
}

var listingFields = []string{"name", "tagline", "description", "tags", "price_per_call_usdc", "endpoint_url",
	"signing_public_key", "input_schema", "output_schema", "timeout_seconds", "pricing_model",
	"price_per_1k_tokens_usdc", "max_price_per_call_usdc", "example_task", "example_parameters"}

// listingForm reads the listing fields of a posted form, trimmed.
func listingForm(r *http.Request) map[string]string {
	form := map[string]string{}
	for _, f := range listingFields {
		form[f] = strings.TrimSpace(r.PostFormValue(f))
	}
	return form
}

// createListing lists an agent from the form; a refusal is shown in the
// API's words, with the form kept as typed.
func (h *Handler) createListing(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	form := listingForm(r)
	p, err := listingParams(form)
	p.CreatorSignature, p.KeySignature = formValue(r, "creator_signature"), formValue(r, "key_signature")
	p.ListingNonce, p.Marketplace = formValue(r, "listing_nonce"), formValue(r, "marketplace")
	if err == nil {
		_, err = h.market.Listings.CreateListing(r.Context(), v.Wallet, p)
	} else {
		err = errors.Join(err, market.CheckListing(p, true))
	}
	if isUserError(err) {
		return refused(err, form, consoleLanding(r, "new", "new-listing")), nil
	}
	return outcome{Notice: "Listed " + form["name"] + ".", Landing: consoleLanding(r, "listings", "")}, err
}

// formValue is a member a listing form carries that the marketplace checks,
// trimmed; nil when empty. app.js signs the listing statement on submit,
// with the wallet key kept in the browser and with the agent's key file
// pasted into the form, which is never sent, over the listing nonce the
// page was served with. Without the signatures (no script, no key here)
// the marketplace's refusal says what to sign. They are not kept in the
// form shown again: the page gets a new nonce and they are signed anew.
func formValue(r *http.Request, field string) *string {
	if sig := strings.TrimSpace(r.PostFormValue(field)); sig != "" {
		return &sig
	}
	return nil
}

func listingParams(f map[string]string) (crtx.ListingParams, error) {
	var p crtx.ListingParams
	str := func(k string) *string { v := f[k]; return &v }
	p.Name, p.Tagline, p.Description, p.PricingModel = str("name"), str("tagline"), str("description"), str("pricing_model")
	p.EndpointURL, p.SigningPublicKey = str("endpoint_url"), str("signing_public_key")
	var tags []string
	for _, t := range strings.Split(f["tags"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	p.Tags = &tags
	var errs []error
	if price, err := crtx.ParseUSDC(f["price_per_call_usdc"]); err != nil {
		errs = append(errs, crtx.InvalidField("price_per_call_usdc", "%v", err))
	} else {
		p.Price = &price
	}
	// A metered listing's two other prices; left out when empty, so that
	// a listing priced per call sends neither (the marketplace names
	// what a metered one lacks).
	for _, m := range []struct {
		key string
		dst **crtx.USDC
	}{{"price_per_1k_tokens_usdc", &p.Per1k}, {"max_price_per_call_usdc", &p.Cap}} {
		if f[m.key] == "" || f["pricing_model"] == crtx.PricingPerCall {
			continue
		}
		if v, err := crtx.ParseUSDC(f[m.key]); err != nil {
			errs = append(errs, crtx.InvalidField(m.key, "%v", err))
		} else {
			*m.dst = &v
		}
	}
	for _, s := range []struct {
		key string
		dst **json.RawMessage
	}{{"input_schema", &p.InputSchema}, {"output_schema", &p.OutputSchema}} {
		raw := json.RawMessage(f[s.key])
		if !json.Valid(raw) {
			errs = append(errs, crtx.InvalidField(s.key, "is not valid JSON"))
		}
		*s.dst = &raw
	}
	// The example is always sent: an empty task removes it.
	p.ExampleTask = str("example_task")
	ex := json.RawMessage("{}")
	if v := strings.TrimSpace(f["example_parameters"]); v != "" {
		if ex = json.RawMessage(v); !json.Valid(ex) {
			errs = append(errs, crtx.InvalidField("example_parameters", "is not valid JSON"))
		}
	}
	p.ExampleParameters = &ex
	if f["timeout_seconds"] != "" {
		n, err := strconv.Atoi(f["timeout_seconds"])
		if err != nil {
			errs = append(errs, crtx.InvalidField("timeout_seconds", "is a whole number of seconds"))
		}
		p.TimeoutSeconds = &n
	}
	return p, errors.Join(errs...)
}

// listingAction pauses, resumes or delists one of the creator's agents.
func (h *Handler) listingAction(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	var a crtx.AgentListItem
	var err error
	id, action := r.PathValue("id"), r.PathValue("action")
	switch action {
	case "pause", "resume":
		st := map[string]crtx.AgentStatus{"pause": crtx.AgentPaused, "resume": crtx.AgentActive}[action]
		a, err = h.market.Listings.UpdateListing(r.Context(), v.Wallet, id, crtx.ListingParams{Status: &st})
	case "delist":
		a, err = h.market.Listings.Delist(r.Context(), v.Wallet, id)
	default:
		return outcome{}, crtx.Errorf(crtx.CodeNotFound, "no action %q", action)
	}
	if err != nil {
		return outcome{}, err
	}
	done := map[string]string{"pause": " is paused: it takes no executions until you resume it.", "resume": " is active again.",
		"delist": " is delisted; its collateral comes back when its dispute window has passed."}[action]
	return outcome{Notice: a.Agent.Name + done, Landing: consoleLanding(r, "listings", "")}, nil
}

// testTool runs the Test Execution tool from the dashboard; the report is
// shown with the inputs kept.
func (h *Handler) testTool(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	in := map[string]string{"endpoint_url": strings.TrimSpace(r.PostFormValue("endpoint_url")),
		"signing_public_key": strings.TrimSpace(r.PostFormValue("signing_public_key")), "pricing_model": r.PostFormValue("pricing_model"),
		"example_task": strings.TrimSpace(r.PostFormValue("example_task")), "example_parameters": strings.TrimSpace(r.PostFormValue("example_parameters"))}
	example := crtx.Example{Task: in["example_task"]}
	if json.Valid([]byte(in["example_parameters"])) {
		example.Parameters = json.RawMessage(in["example_parameters"])
	}
	rep := api.NewTestReport(h.market.Listings.TestEndpoint(r.Context(), v.Wallet, in["endpoint_url"], in["signing_public_key"], 30,
		in["pricing_model"] == crtx.PricingMetered, example))
	return outcome{Report: &rep, Form: in, Landing: consoleLanding(r, "test", "test")}, nil
}

func (h *Handler) answerDispute(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	out := outcome{Landing: consoleLanding(r, "disputes", "disputes")}
	if _, err := h.market.Disputes.RespondToDispute(r.Context(), v.Wallet, r.PathValue("id"), r.PostFormValue("text")); err != nil {
		return out, err
	}
	out.Notice = fmt.Sprintf("Answer sent for dispute %s.", r.PathValue("id"))
	return out, nil
}

// editListing shows a listing's form, filled in, for changes: with the
// agent's values, or as typed when a change was refused.
func (h *Handler) editListing(w http.ResponseWriter, r *http.Request, v visit) error {
	it, err := h.market.Listings.CreatorAgent(r.Context(), v.Wallet, r.PathValue("id"))
	a := api.NewCreatorAgent(it, h.market.Links())
	if err == nil && a.Status == crtx.AgentDelisted {
		err = crtx.Errorf(crtx.CodeAgentNotFound, "you have no listed agent %q", a.AgentID)
	}
	if err != nil {
		return err
	}
	out := h.outcome(r, v)
	form := out.Form
	if form == nil {
		form = map[string]string{"tagline": a.Tagline, "description": a.Description, "tags": strings.Join(a.Tags, ", "),
			"price_per_call_usdc": a.Price.String(), "endpoint_url": a.EndpointURL, "signing_public_key": a.SigningPublicKey,
			"input_schema": string(a.InputSchema), "output_schema": string(a.OutputSchema), "timeout_seconds": strconv.Itoa(a.TimeoutSeconds),
			"example_task": a.ExampleTask, "example_parameters": string(a.ExampleParameters)}
		if a.Per1k != nil && a.Cap != nil {
			form["price_per_1k_tokens_usdc"], form["max_price_per_call_usdc"] = a.Per1k.String(), a.Cap.String()
		}
	}
	nonce, err := h.formNonce(r.Context(), v.Wallet)
	if err != nil {
		return err
	}
	return h.render(w, "edit", v.page("Edit "+a.Name+" — crtx", editData{Agent: a, Form: form, Fields: out.Fields, ListingNonce: nonce.Nonce, Marketplace: nonce.Marketplace}).with(out))
}

type editData struct {
	Agent                     api.CreatorAgent
	Form                      map[string]string
	Fields                    map[string]string
	ListingNonce, Marketplace string // for a change of key, as creatorData's
}

// saveListing applies the edit form: each change is a ListingUpdated; a new
// endpoint or key is tested again. A refusal goes back to the form, as typed.
func (h *Handler) saveListing(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	form := listingForm(r)
	form["name"], form["pricing_model"] = "", ""
	p, err := listingParams(form)
	p.Name, p.PricingModel = nil, nil
	p.CreatorSignature, p.KeySignature = formValue(r, "creator_signature"), formValue(r, "key_signature")
	p.ListingNonce, p.Marketplace, p.Replaces = formValue(r, "listing_nonce"), formValue(r, "marketplace"), formValue(r, "replaces")
	if err != nil {
		err = errors.Join(err, market.CheckListing(p, false))
	}
	edit := "/dashboard/creator/agents/" + url.PathEscape(r.PathValue("id")) + "/edit"
	var a crtx.AgentListItem
	if err == nil {
		// A price in a higher tier takes money, which a person agrees to
		// first: the box ticked for the amount the form showed.
		confirmed, _ := crtx.ParseUSDC(r.PostFormValue("more_collateral"))
		a, err = h.market.Listings.UpdateListingWithin(r.Context(), v.Wallet, r.PathValue("id"), p, confirmed)
	}
	if mc := (*market.MoreCollateral)(nil); errors.As(err, &mc) {
		form["more_collateral"] = mc.More.String()
		return outcome{Error: "Saving locks " + mc.More.String() + " USDC more collateral, from your mainnet balance, for what this price's tier needs beyond what the listing holds. Tick the box below the form to confirm.",
			Form: form, Landing: edit}, nil
	}
	if isUserError(err) {
		return refused(err, form, edit), nil
	}
	return outcome{Notice: "Saved " + a.Agent.Name + ".", Landing: consoleURL("listings", crtx.Mainnet, "")}, err
}

// formNonce is the listing nonce a listing form is served with: one the
// wallet holds open, else a new one. A page is a read: a wallet that was
// issued too many is served the form without one (its submission then
// says what is missing), never an error page.
func (h *Handler) formNonce(ctx context.Context, wallet string) (crtx.ListingNonce, error) {
	if n, ok, err := h.market.Listings.OpenListingNonce(ctx, wallet); ok || err != nil {
		return n, err
	}
	n, err := h.nonce(ctx, wallet)
	var ce *crtx.Error
	if errors.As(err, &ce) && ce.Code == crtx.CodeRateLimited {
		return crtx.ListingNonce{}, nil
	}
	return n, err
}
