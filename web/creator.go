package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

type bar struct {
	X, Y, W, H int
	Label      string
}

type creatorData struct {
	Agents     []api.CreatorAgent
	Earnings   crtx.Earnings
	Chart      []bar
	ChartMax   string
	Executions []api.ExecutionSummary
	Disputes   []api.DisputeInfo
	Form       map[string]string
	Report     *api.TestReport
}

// creator is the creator's dashboard: listings, the listing form, the
// signing-key generator, the Test Execution tool, earnings per day, usage,
// receipts and disputes to answer.
func (h *Handler) creator(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.session(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	return h.renderCreator(w, r, wallet, csrf, page{}, nil, nil)
}

func (h *Handler) renderCreator(w http.ResponseWriter, r *http.Request, wallet, csrf string, p page, form map[string]string, rep *api.TestReport) error {
	ctx := r.Context()
	agents, err := h.market.CreatorAgents(ctx, wallet)
	if err != nil {
		return err
	}
	env := crtx.Mainnet
	if r.URL.Query().Get("environment") == "devnet" {
		env = crtx.Devnet
	}
	earnings, err := h.market.CreatorEarnings(ctx, wallet, env)
	if err != nil {
		return err
	}
	list, _, err := h.market.Executions(ctx, crtx.ExecutionQuery{Creator: wallet, Environment: env, Limit: 20})
	if err != nil {
		return err
	}
	disputes, err := h.market.Disputes(ctx, crtx.DisputeQuery{Creator: wallet, Limit: 100})
	if err != nil {
		return err
	}
	d := creatorData{Agents: agents, Earnings: earnings, Form: form, Report: rep}
	for _, e := range list {
		d.Executions = append(d.Executions, h.market.Summary(e))
	}
	for _, ds := range disputes {
		d.Disputes = append(d.Disputes, api.NewDisputeInfo(ds))
	}
	// Earnings per day as bars of an inline SVG, the last 30 days with any.
	days := earnings.Days
	if len(days) > 30 {
		days = days[len(days)-30:]
	}
	var top crtx.USDC
	for _, day := range days {
		top = max(top, day.Earned)
	}
	for i, day := range days {
		hgt := 0
		if top > 0 {
			hgt = int(int64(day.Earned) * 100 / int64(top))
		}
		d.Chart = append(d.Chart, bar{X: i * 20, Y: 110 - hgt, W: 16, H: hgt, Label: day.Date + ": " + day.Earned.String() + " USDC"})
	}
	d.ChartMax = top.String()
	if form == nil {
		d.Form = map[string]string{"pricing_model": "pay_per_use", "input_schema": `{"type": "object", "properties": {}}`,
			"output_schema": `{"type": "string"}`, "timeout_seconds": "60"}
	}
	p.Title, p.Wallet, p.CSRF, p.Data = "Creator — crtx", wallet, csrf, d
	return h.render(w, "creator", p)
}

var listingFields = []string{"name", "tagline", "description", "tags", "price_per_call_usdc", "endpoint_url",
	"signing_public_key", "input_schema", "output_schema", "timeout_seconds", "pricing_model"}

// listingForm reads the listing fields of a posted form, trimmed.
func listingForm(r *http.Request) map[string]string {
	form := map[string]string{}
	for _, f := range listingFields {
		form[f] = strings.TrimSpace(r.PostFormValue(f))
	}
	return form
}

// createListing lists an agent from the form; any refusal is shown in the
// API's words, with the form kept as typed.
func (h *Handler) createListing(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	form := listingForm(r)
	p, perr := listingParams(form)
	p.CreatorSignature = formSignature(r)
	if perr == nil {
		_, perr = h.market.CreateListing(r.Context(), wallet, p)
	}
	if perr != nil {
		if !isUserError(perr) {
			return perr
		}
		return h.renderCreator(w, r, wallet, csrf, page{Error: message(perr)}, form, nil)
	}
	return h.renderCreator(w, r, wallet, csrf, page{Notice: "Listed " + form["name"] + "."}, nil, nil)
}

// formSignature is the creator_signature a form carries: app.js signs the
// listing statement with the wallet key kept in the browser, on submit.
// Without it (no script, no key here) the marketplace's refusal says what
// to sign. It is not kept in the form shown again: it is signed anew.
func formSignature(r *http.Request) *string {
	if sig := strings.TrimSpace(r.PostFormValue("creator_signature")); sig != "" {
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
	price, err := crtx.ParseUSDC(f["price_per_call_usdc"])
	if err != nil {
		return p, crtx.Errorf(crtx.CodeInvalidRequest, "price_per_call_usdc: %v", err)
	}
	p.Price = &price
	for _, s := range []struct {
		key string
		dst **json.RawMessage
	}{{"input_schema", &p.InputSchema}, {"output_schema", &p.OutputSchema}} {
		raw := json.RawMessage(f[s.key])
		if !json.Valid(raw) {
			return p, crtx.Errorf(crtx.CodeInvalidRequest, "%s: not valid JSON", s.key)
		}
		*s.dst = &raw
	}
	if f["timeout_seconds"] != "" {
		n, err := strconv.Atoi(f["timeout_seconds"])
		if err != nil {
			return p, crtx.Errorf(crtx.CodeInvalidRequest, "timeout_seconds: a whole number of seconds")
		}
		p.TimeoutSeconds = &n
	}
	return p, nil
}

// listingAction pauses, resumes or delists one of the creator's agents.
func (h *Handler) listingAction(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	id := r.PathValue("id")
	switch action := r.PathValue("action"); action {
	case "pause", "resume":
		st := map[string]crtx.AgentStatus{"pause": crtx.AgentPaused, "resume": crtx.AgentActive}[action]
		_, err = h.market.UpdateListing(r.Context(), wallet, id, crtx.ListingParams{Status: &st})
	case "delist":
		_, err = h.market.Delist(r.Context(), wallet, id)
	default:
		return crtx.Errorf(crtx.CodeNotFound, "no action %q", action)
	}
	if err != nil {
		if !isUserError(err) {
			return err
		}
		return h.renderCreator(w, r, wallet, csrf, page{Error: message(err)}, nil, nil)
	}
	http.Redirect(w, r, "/dashboard/creator", http.StatusSeeOther)
	return nil
}

// testTool runs the Test Execution tool from the dashboard.
func (h *Handler) testTool(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	rep := h.market.TestEndpoint(r.Context(), wallet, strings.TrimSpace(r.PostFormValue("endpoint_url")),
		strings.TrimSpace(r.PostFormValue("signing_public_key")), 30)
	return h.renderCreator(w, r, wallet, csrf, page{}, nil, &rep)
}

func (h *Handler) answerDispute(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	if _, err := h.market.RespondToDispute(r.Context(), wallet, r.PathValue("id"), r.PostFormValue("text")); err != nil {
		if !isUserError(err) {
			return err
		}
		return h.renderCreator(w, r, wallet, csrf, page{Error: message(err)}, nil, nil)
	}
	return h.renderCreator(w, r, wallet, csrf, page{Notice: fmt.Sprintf("Answer sent for dispute %s.", r.PathValue("id"))}, nil, nil)
}

// editListing shows a listing's form, filled in, for changes.
func (h *Handler) editListing(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.session(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	agents, err := h.market.CreatorAgents(r.Context(), wallet)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.AgentID == r.PathValue("id") && a.Status != crtx.AgentDelisted {
			form := map[string]string{"tagline": a.Tagline, "description": a.Description, "tags": strings.Join(a.Tags, ", "),
				"price_per_call_usdc": a.Price.String(), "endpoint_url": a.EndpointURL, "signing_public_key": a.SigningPublicKey,
				"input_schema": string(a.InputSchema), "output_schema": string(a.OutputSchema), "timeout_seconds": strconv.Itoa(a.TimeoutSeconds)}
			return h.render(w, "edit", page{Title: "Edit " + a.Name + " — crtx", Wallet: wallet, CSRF: csrf, Data: editData{Agent: a, Form: form}})
		}
	}
	return crtx.Errorf(crtx.CodeAgentNotFound, "you have no listed agent %q", r.PathValue("id"))
}

type editData struct {
	Agent api.CreatorAgent
	Form  map[string]string
}

// saveListing applies the edit form: each change is a ListingUpdated; a new
// endpoint or key is tested again.
func (h *Handler) saveListing(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	form := listingForm(r)
	form["name"], form["pricing_model"] = "", ""
	p, perr := listingParams(form)
	p.Name, p.PricingModel = nil, nil
	p.CreatorSignature = formSignature(r)
	var a api.CreatorAgent
	if perr == nil {
		a, perr = h.market.UpdateListing(r.Context(), wallet, r.PathValue("id"), p)
	}
	if perr != nil {
		if !isUserError(perr) {
			return perr
		}
		agents, _ := h.market.CreatorAgents(r.Context(), wallet)
		for _, x := range agents {
			if x.AgentID == r.PathValue("id") {
				a = x
			}
		}
		return h.render(w, "edit", page{Title: "Edit — crtx", Wallet: wallet, CSRF: csrf, Error: message(perr), Data: editData{Agent: a, Form: form}})
	}
	return h.renderCreator(w, r, wallet, csrf, page{Notice: "Saved " + a.Name + "."}, nil, nil)
}
