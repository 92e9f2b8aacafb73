package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
)

// loginProblem is what the sign-in page says when it is sent back to:
// a session that ended under a form, or an unknown token pasted.
func loginProblem(q url.Values) string {
	switch {
	case q.Get("ended") != "":
		return "Your session has ended, so nothing was sent. Sign in again to go on."
	case q.Get("token") != "":
		return "That is not a valid session token: run crtx session again, or sign in with your wallet."
	}
	return ""
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	v, _ := h.session(r)
	q := r.URL.Query()
	p := v.page("Sign in — crtx", dashboardPath(q.Get("next")))
	p.Error = loginProblem(q)
	switch {
	case q.Get("connect") != "":
		p.Notice = "An app asks to connect to crtx. Sign in with your wallet first; then you choose the environment and how much it may spend."
		// The app as it registered, read from the request it comes back
		// to: a name put in this page's own address is never shown.
		if u, err := url.Parse(q.Get("next")); err == nil && u.Path == "/oauth/authorize" {
			a := u.Query()
			if c, err := h.market.Connectors.Client(r.Context(), a.Get("client_id"), a.Get("redirect_uri")); err == nil {
				p.Notice = c.Name + " asks to connect to crtx. Sign in with your wallet first; then you choose the environment and how much it may spend."
			}
		}
	case p.Error == "" && q.Get("next") != "":
		p.Notice = "Sign in to open " + pageName(dashboardPath(q.Get("next"))) + "; you come back to it after."
	}
	return h.render(w, "login", p)
}

// pageName is what a page sign-in leads back to is called.
func pageName(path string) string {
	for _, p := range []struct{ prefix, name string }{
		{"/dashboard/keys", "your API keys"}, {"/dashboard/creator", "the creator console"},
		{"/dashboard/executions/", "that execution"}, {"/dashboard/deposits/", "that deposit"},
		{"/dashboard/withdrawals/", "your withdrawals"}, {"/dashboard/operator", "the operator's page"},
		{"/agents/", "the agent's page and run it"},
	} {
		if strings.HasPrefix(path, p.prefix) {
			return p.name
		}
	}
	return "your dashboard"
}

// loginToken turns a session token — from the browser's own sign-in, or
// pasted from `crtx session` — into the dashboards' cookie.
func (h *Handler) loginToken(w http.ResponseWriter, r *http.Request) error {
	token := strings.TrimSpace(r.PostFormValue("token"))
	next := dashboardPath(r.PostFormValue("next"))
	p, err := h.market.Accounts.Authenticate(r.Context(), token)
	if err != nil || p.Key != nil || !strings.HasPrefix(token, crtx.SessionPrefix) {
		http.Redirect(w, r, "/login?token=bad&next="+url.QueryEscape(next), http.StatusSeeOther)
		return nil
	}
	h.setCookie(w, sessionCookie, token, int(crtx.SessionTTL.Seconds()))
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// dashboardPath is next if it names a dashboard page of this origin, else
// the dashboard. Only a path is kept, cleaned and escaped again: a browser
// reads "//host" and "/\host" as another origin, and http.Redirect cleans
// "/dashboard/../\host" into the second, so a prefix is not enough.
func dashboardPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.User != nil || u.Host != "" ||
		!strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) || strings.Contains(u.Path, `\`) {
		return "/dashboard/"
	}
	p := path.Clean(u.Path)
	// An agent's page: "Sign in to run it" comes back to its form.
	agent := strings.HasPrefix(p, "/agents/") && strings.Count(p, "/") == 2
	if p != "/dashboard" && !strings.HasPrefix(p, "/dashboard/") && p != "/oauth/authorize" && !agent {
		return "/dashboard/"
	}
	if strings.HasSuffix(u.Path, "/") {
		p += "/"
	}
	back := &url.URL{Path: p, RawQuery: u.RawQuery}
	if agent && u.Fragment == "try" {
		back.Fragment = "try"
	}
	return back.String()
}

// logout ends the session whose page sent the form; a form of no session
// of this browser only clears the cookie.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	if v, err := h.session(r); err == nil {
		if _, err := v.key.check(r.PostFormValue("csrf"), v.at); err == nil {
			h.market.Accounts.SignOut(r.Context(), string(v.key))
		}
	}
	h.setCookie(w, sessionCookie, "", -1)
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

type dashData struct {
	Balances map[crtx.Environment]crtx.Balance
	// Funds are the environments with a chain, where money comes in by a
	// deposit paid on the chain and goes out by a withdrawal; Airdrop says
	// devnet has none, so its funds come from the airdrop.
	Funds   []funds
	Airdrop bool
	// Locked is what the wallet's listings hold as collateral on mainnet,
	// and LockedTotal their sum: money of the wallet's that its available
	// balance does not show. NoChain are the environments without a chain,
	// whose funds the operator deposits (crtxd ledger deposit).
	Locked      []market.Locked
	LockedTotal crtx.USDC
	NoChain     []crtx.Environment
	Executions  []historyRow
	Total       int
	Env         string
	Status      string
	Statuses    []string
	// Spend is the environment's spending per day over Span days.
	Spend *spendChart
	Span  int
	// Prev and Next page through the history ("" at its ends); First and
	// Last number the rows shown.
	Prev, Next  string
	First, Last int
	// Keys counts the wallet's API keys, for the first steps of an
	// account without a run.
	Keys   int
	Funded bool
	Now    time.Time
	// Disputes are those the wallet opened, in both environments.
	Disputes []crtx.Dispute
	query    url.Values
}

// historyRow is one execution of the history: its summary and the starts
// of its task and of its result.
type historyRow struct {
	api.ExecutionSummary
	Task, Result string
	// Refunded and Charged are Execution.Charge's; Held is what a metered
	// call's escrow held (0 for a price per call), of which it charged
	// Charged.
	Refunded, Charged, Held crtx.USDC
}

// HistoryURL is the dashboard with q changed by change, for the history's
// filters, spans and pages.
func (d dashData) HistoryURL(change ...string) string {
	v := url.Values{}
	for k, vals := range d.query {
		v[k] = vals
	}
	v.Del("sent") // a form's outcome is said once, where it landed
	for i := 0; i+1 < len(change); i += 2 {
		if change[i+1] == "" {
			v.Del(change[i])
		} else {
			v.Set(change[i], change[i+1])
		}
	}
	if len(v) == 0 {
		return "/dashboard/"
	}
	return "/dashboard/?" + v.Encode()
}

// dashboard is the user's: balances, adding funds and withdrawing where an
// environment has a chain (a devnet airdrop where it has none), and the
// history of executions with filters.
func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request, v visit) error {
	b, err := h.market.Funds.Balances(r.Context(), v.Wallet, crtx.Environments...)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	env := crtx.Devnet
	if q.Get("environment") == "mainnet" {
		env = crtx.Mainnet
	}
	eq := crtx.ExecutionQuery{Wallet: v.Wallet, Environment: env, AgentID: q.Get("agent_id"), Limit: 25}
	eq.Offset, _ = strconv.Atoi(q.Get("offset"))
	eq.Offset = max(eq.Offset, 0)
	switch st := q.Get("status"); st {
	case "pending", "running", "completed", "failed", "disputed":
		eq.Status = crtx.ExecStatus(st)
	}
	list, total, err := h.market.Executions.Executions(r.Context(), eq)
	if err != nil {
		return err
	}
	d := dashData{Balances: b, Total: total, Env: string(env), Status: string(eq.Status), Span: 30, Now: v.at, query: q,
		Statuses: []string{"pending", "running", "completed", "failed", "disputed"}, Airdrop: h.market.Chain(crtx.Devnet) == nil}
	if d.Locked, err = h.market.Listings.LockedCollateral(r.Context(), v.Wallet); err != nil {
		return err
	}
	if d.Disputes, err = h.market.Disputes.Disputes(r.Context(), crtx.DisputeQuery{Wallet: v.Wallet, Limit: 100}); err != nil {
		return err
	}
	for _, l := range d.Locked {
		d.LockedTotal += l.Amount
	}
	for _, e := range crtx.Environments {
		if h.market.Chain(e) == nil && e != crtx.Devnet {
			d.NoChain = append(d.NoChain, e)
		}
	}
	if q.Get("days") == "7" {
		d.Span = 7
	}
	if d.Funds, err = h.funds(r.Context(), v.Wallet); err != nil {
		return err
	}
	results, err := h.market.Executions.ResultPreviews(r.Context(), list, 120)
	if err != nil {
		return err
	}
	if err := h.market.Executions.Outcomes(r.Context(), list); err != nil {
		return err
	}
	for _, e := range list {
		row := historyRow{ExecutionSummary: api.NewExecutionSummary(e, h.market.Links()), Task: preview(e.Task, 80), Result: preview(results[e.ID], 80)}
		row.Refunded, row.Charged = e.Charge()
		if _, metered := e.Metered(); metered {
			row.Held = e.Held
		}
		d.Executions = append(d.Executions, row)
	}
	d.First, d.Last = eq.Offset+1, eq.Offset+len(list)
	if eq.Offset > 0 {
		d.Prev = d.HistoryURL("offset", strconv.Itoa(max(eq.Offset-eq.Limit, 0)))
	}
	if eq.Offset+eq.Limit < total {
		d.Next = d.HistoryURL("offset", strconv.Itoa(eq.Offset+eq.Limit))
	}
	spend, err := h.market.Funds.Spending(r.Context(), v.Wallet, env, d.Span)
	if err != nil {
		return err
	}
	d.Spend = newSpendChart(spend, v.at, d.Span)
	keys, err := h.market.Accounts.Keys(r.Context(), v.Wallet)
	if err != nil {
		return err
	}
	d.Keys, d.Funded = len(keys), b[crtx.Devnet].Available > 0 || b[crtx.Mainnet].Available > 0
	out := h.outcome(r, v)
	for _, f := range d.Funds {
		for _, wd := range f.Withdrawals.List {
			if wd.WithdrawalID == out.Withdrawal && wd.Status.Final() {
				out.Notice = "" // "on its way" no more: the list says how it ended
			}
		}
	}
	return h.render(w, "dashboard", v.page("Dashboard — crtx", d).with(out))
}

func (h *Handler) airdrop(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	amount, err := crtx.ParseUSDC(r.PostFormValue("amount"))
	if err != nil {
		return outcome{Error: "Amount: " + err.Error()}, nil
	}
	if _, err := h.market.Funds.Airdrop(r.Context(), v.Wallet, amount); err != nil {
		return outcome{}, err
	}
	return outcome{Notice: amount.String() + " USDC airdropped on devnet.", Landing: agentPage(r.PostFormValue("back"))}, nil
}

type execData struct {
	Record   api.ExecutionRecord
	Receipts string
	Dispute  disputeData
	Now      time.Time
	// Task and Parameters are what was asked of the agent.
	Task       string
	Parameters json.RawMessage
	// Charged is what the execution cost its caller in the end
	// (Execution.Charge).
	Charged crtx.USDC
}

// Final says the execution has ended, so its receipt can be issued.
func (d execData) Final() bool { return d.Record.Status.Final() }

// execution shows one of the wallet's executions: its result, its receipt
// (cost, split, ledger links) and a Verify button that recomputes the hash
// in the browser.
func (h *Handler) execution(w http.ResponseWriter, r *http.Request, v visit) error {
	e, result, err := h.ownExecution(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := h.outcome(r, v)
	d := execData{Record: api.NewExecutionRecord(e, result, h.market.Links()), Dispute: disputeOf(e, out), Now: v.at, Task: e.Task, Parameters: e.Parameters}
	_, d.Charged = e.Charge()
	return h.render(w, "execution", v.page("Execution — crtx", d).with(out))
}

type keysData struct {
	Keys    []crtx.APIKey
	Created *api.CreatedKey
	// Webhooks are the wallet's webhook signing secrets, devnet's then
	// mainnet's, shown as the API answers them to the same wallet.
	Webhooks []webhookSecret
}

// webhookSecret is one environment's secret on the keys page; Overlap is
// the end of the old one's overlap after a rotation.
type webhookSecret struct {
	Environment crtx.Environment
	Secret      crtx.WebhookSecret
	Overlap     *time.Time
}

// newKeyCookie carries a created key's secret from the form's post to the
// page that shows it, once: that page clears it, so a reload or Back shows
// the secret no more, and the database never holds it.
const newKeyCookie = "crtx_new_key"

func (h *Handler) keys(w http.ResponseWriter, r *http.Request, v visit) error {
	keys, err := h.market.Accounts.Keys(r.Context(), v.Wallet)
	if err != nil {
		return err
	}
	d := keysData{Keys: keys}
	for _, env := range []crtx.Environment{crtx.Devnet, crtx.Mainnet} {
		secret, err := h.market.Connectors.WebhookSecret(r.Context(), v.Wallet, env)
		if err != nil {
			// The page still serves its keys, to revoke one at least.
			h.log.ErrorContext(r.Context(), "webhook secret", "err", err)
			continue
		}
		ws := webhookSecret{Environment: env, Secret: secret}
		if now := h.market.Now(); secret.Previous != nil && now.Before(secret.PreviousUntil) {
			ws.Overlap = &secret.PreviousUntil
		}
		d.Webhooks = append(d.Webhooks, ws)
	}
	if c, err := r.Cookie(newKeyCookie); err == nil {
		http.SetCookie(w, &http.Cookie{Name: newKeyCookie, Path: "/dashboard/keys", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
		var created api.CreatedKey
		if b, err := base64.RawURLEncoding.DecodeString(c.Value); err == nil && json.Unmarshal(b, &created) == nil &&
			slices.ContainsFunc(keys, func(k crtx.APIKey) bool { return k.ID == created.ID }) {
			d.Created = &created
		}
	}
	out := h.outcome(r, v)
	if out.Key != "" && d.Created == nil {
		out.Notice += " Its secret was shown once, on the page that first answered; if you did not keep it, revoke the key and make another."
	}
	return h.render(w, "keys", v.page("API keys — crtx", d).with(out))
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	var limit *crtx.USDC
	if s := strings.TrimSpace(r.PostFormValue("spend_limit")); s != "" {
		l, err := crtx.ParseUSDC(s)
		if err != nil {
			return outcome{Error: "Spend limit: " + err.Error()}, nil
		}
		limit = &l
	}
	k, secret, err := h.market.Accounts.CreateKey(r.Context(), v.Wallet, r.PostFormValue("name"), crtx.Environment(r.PostFormValue("environment")), limit)
	if err != nil {
		return outcome{}, err
	}
	b, err := json.Marshal(api.CreatedKey{ID: k.ID, Name: k.Name, Environment: k.Environment, Key: secret,
		Prefix: k.Prefix, CreatedAt: k.CreatedAt, SpendLimit: k.SpendLimit})
	if err != nil {
		return outcome{}, err
	}
	http.SetCookie(w, &http.Cookie{Name: newKeyCookie, Value: base64.RawURLEncoding.EncodeToString(b), Path: "/dashboard/keys",
		MaxAge: 300, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
	return outcome{Notice: "Key " + k.Name + " created.", Key: k.ID}, nil
}

func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	env, err := crtx.ParseEnvironment("environment", r.PostFormValue("environment"))
	if err != nil {
		return outcome{Error: err.Error()}, nil
	}
	if _, err := h.market.Connectors.RotateWebhookSecret(r.Context(), v.Wallet, env); err != nil {
		return outcome{}, err
	}
	return outcome{Notice: "The " + string(env) + " webhook secret was rotated. For 24 hours deliveries are signed with the old one too: switch your receivers to the new one before then."}, nil
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	k, err := h.market.Accounts.RevokeKey(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return outcome{}, err
	}
	return outcome{Notice: "Key " + k.Name + " revoked: it can no longer run agents."}, nil
}

// agentPage is back when it is an agent page of this site (a form sent
// from one goes back there), else "" for the form's own page.
func agentPage(back string) string {
	u, err := url.Parse(back)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/agents/") ||
		strings.ContainsAny(back, "\\\r\n") || strings.Contains(back, "//") {
		return ""
	}
	return back
}

// receiptFile is an execution's signed receipt, as the API issues it, to
// download and keep: crtx verify and the SDKs check it offline.
func (h *Handler) receiptFile(w http.ResponseWriter, r *http.Request, v visit) error {
	e, _, err := h.ownExecution(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return err
	}
	final, err := h.market.Executions.Receipt(r.Context(), crtx.Principal{Wallet: v.Wallet, Key: &crtx.APIKey{Environment: e.Environment}}, e.ID)
	if err != nil {
		return err
	}
	rc, err := api.NewReceipt(final, h.market.Links(), h.market.Config().Signer)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(rc, "", "  ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="crtx-receipt-`+e.ID+`.json"`)
	_, err = w.Write(append(b, '\n'))
	return err
}
