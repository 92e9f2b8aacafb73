package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	wallet, _, _ := h.session(r)
	return h.render(w, "login", page{Title: "Sign in — crtx", Wallet: wallet, Data: r.URL.Query().Get("next")})
}

// loginToken turns a session token — from the browser's own sign-in, or
// pasted from `crtx session` — into the dashboards' cookie.
func (h *Handler) loginToken(w http.ResponseWriter, r *http.Request) error {
	token := strings.TrimSpace(r.PostFormValue("token"))
	p, err := h.market.Authenticate(r.Context(), token)
	if err != nil || p.Key != nil || !strings.HasPrefix(token, crtx.SessionPrefix) {
		return h.render(w, "login", page{Title: "Sign in — crtx", Error: "That is not a valid session token; sign in again."})
	}
	h.setCookie(w, sessionCookie, token, int(crtx.SessionTTL.Seconds()))
	next := r.PostFormValue("next")
	if !strings.HasPrefix(next, "/dashboard") {
		next = "/dashboard/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, _, err := h.form(r); err == nil {
			h.market.SignOut(r.Context(), c.Value)
		}
	}
	h.setCookie(w, sessionCookie, "", -1)
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

type dashData struct {
	Balances   map[crtx.Environment]crtx.Balance
	Executions []api.ExecutionSummary
	Total      int
	Env        string
	Status     string
	Statuses   []string
}

// dashboard is the user's: balances, a devnet airdrop, and the history of
// executions with filters.
func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.session(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	return h.renderDashboard(w, r, wallet, csrf, "", "")
}

func (h *Handler) renderDashboard(w http.ResponseWriter, r *http.Request, wallet, csrf, notice, problem string) error {
	b, err := h.market.Balances(r.Context(), wallet, crtx.Environments...)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	env := crtx.Devnet
	if q.Get("environment") == "mainnet" {
		env = crtx.Mainnet
	}
	eq := crtx.ExecutionQuery{Wallet: wallet, Environment: env, AgentID: q.Get("agent_id"), Limit: 50}
	switch st := q.Get("status"); st {
	case "pending", "running", "completed", "failed", "disputed":
		eq.Status = crtx.ExecStatus(st)
	}
	list, total, err := h.market.Executions(r.Context(), eq)
	if err != nil {
		return err
	}
	d := dashData{Balances: b, Total: total, Env: string(env), Status: string(eq.Status),
		Statuses: []string{"pending", "running", "completed", "failed", "disputed"}}
	for _, e := range list {
		d.Executions = append(d.Executions, h.market.Summary(e))
	}
	return h.render(w, "dashboard", page{Title: "Dashboard — crtx", Wallet: wallet, CSRF: csrf, Notice: notice, Error: problem, Data: d})
}

func (h *Handler) airdrop(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	amount, err := crtx.ParseUSDC(r.PostFormValue("amount"))
	if err == nil {
		_, err = h.market.Airdrop(r.Context(), wallet, amount)
	}
	if err != nil {
		if errors.Is(err, crtx.ErrAmount) || isUserError(err) {
			return h.renderDashboard(w, r, wallet, csrf, "", message(err))
		}
		return err
	}
	return h.renderDashboard(w, r, wallet, csrf, amount.String()+" USDC airdropped on devnet.", "")
}

type execData struct {
	Record   api.ExecutionRecord
	Receipts string
}

// execution shows one of the wallet's executions: its result, its receipt
// (cost, split, ledger links) and a Verify button that recomputes the hash
// in the browser.
func (h *Handler) execution(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.session(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	var found *api.ExecutionRecord
	for _, env := range crtx.Environments {
		e, result, err := h.market.GetExecution(r.Context(), crtx.Principal{Wallet: wallet, Key: &crtx.APIKey{Environment: env}}, r.PathValue("id"))
		if err == nil {
			rec := h.market.Record(e, result)
			found = &rec
			break
		}
		if crtx.ErrorCode(err) != crtx.CodeExecutionNotFound {
			return err
		}
	}
	if found == nil {
		return crtx.Errorf(crtx.CodeExecutionNotFound, "no execution %q of this wallet", r.PathValue("id"))
	}
	return h.render(w, "execution", page{Title: "Execution — crtx", Wallet: wallet, CSRF: csrf, Data: execData{Record: *found}})
}

type keysData struct {
	Keys    []crtx.APIKey
	Created *api.CreatedKey
}

func (h *Handler) keys(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.session(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	return h.renderKeys(w, r, wallet, csrf, nil, "")
}

func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, wallet, csrf string, created *api.CreatedKey, problem string) error {
	keys, err := h.market.Keys(r.Context(), wallet)
	if err != nil {
		return err
	}
	return h.render(w, "keys", page{Title: "API keys — crtx", Wallet: wallet, CSRF: csrf, Error: problem, Data: keysData{Keys: keys, Created: created}})
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) error {
	wallet, csrf, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	var limit *crtx.USDC
	if s := strings.TrimSpace(r.PostFormValue("spend_limit")); s != "" {
		l, err := crtx.ParseUSDC(s)
		if err != nil {
			return h.renderKeys(w, r, wallet, csrf, nil, "Spend limit: "+err.Error())
		}
		limit = &l
	}
	k, secret, err := h.market.CreateKey(r.Context(), wallet, r.PostFormValue("name"), crtx.Environment(r.PostFormValue("environment")), limit)
	if err != nil {
		if isUserError(err) {
			return h.renderKeys(w, r, wallet, csrf, nil, message(err))
		}
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return h.renderKeys(w, r, wallet, csrf, &api.CreatedKey{ID: k.ID, Name: k.Name, Environment: k.Environment, Key: secret,
		Prefix: k.Prefix, CreatedAt: k.CreatedAt, SpendLimit: k.SpendLimit}, "")
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request) error {
	wallet, _, err := h.form(r)
	if err != nil {
		return h.signedIn(w, r, err)
	}
	if _, err := h.market.RevokeKey(r.Context(), wallet, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/keys", http.StatusSeeOther)
	return nil
}
