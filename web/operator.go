package web

import (
	"net/http"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// operatorVisit is the operator's, behind an operator session opened with
// the admin token and kept in a cookie of its own; errOperatorSignIn
// without one.
func (h *Handler) operatorVisit(r *http.Request) (visit, error) {
	c, err := r.Cookie(adminCookie)
	if err != nil || h.adminToken.Get() == "" || !h.market.Accounts.IsOperatorSession(r.Context(), c.Value, h.adminToken.Get()) {
		return visit{}, errOperatorSignIn
	}
	return visit{key: formKey(c.Value), at: h.market.Now()}, nil
}

type operatorData struct {
	Disputes []api.DisputeInfo
	// Resolved are the latest resolved disputes, newest first.
	Resolved []api.DisputeInfo
}

// operatorProblem is what the operator's sign-in says when sent back to.
func operatorProblem(q url.Values) string {
	switch {
	case q.Get("ended") != "":
		return "Your operator session has ended, so nothing was done. Sign in again to go on."
	case q.Get("token") != "":
		return "That is not the admin token."
	}
	return ""
}

func (h *Handler) operator(w http.ResponseWriter, r *http.Request) error {
	if h.adminToken.Get() == "" {
		return crtx.Errorf(crtx.CodeNotFound, "the admin API is off: start crtxd with --admin-token-file")
	}
	v, err := h.operatorVisit(r)
	if err != nil {
		p := page{Title: "Operator — crtx", Error: operatorProblem(r.URL.Query())}
		return h.render(w, "operator-login", p)
	}
	open, err := h.market.Disputes.Disputes(r.Context(), crtx.DisputeQuery{Status: "open", Limit: 500})
	if err != nil {
		return err
	}
	resolved, err := h.market.Disputes.Disputes(r.Context(), crtx.DisputeQuery{Resolved: true, Limit: 50})
	if err != nil {
		return err
	}
	d := operatorData{}
	for _, x := range open {
		d.Disputes = append(d.Disputes, api.NewDisputeInfo(x))
	}
	for _, x := range resolved {
		d.Resolved = append(d.Resolved, api.NewDisputeInfo(x))
	}
	return h.render(w, "operator", v.page("Operator — crtx", d).with(h.outcome(r, v)))
}

func (h *Handler) operatorLogin(w http.ResponseWriter, r *http.Request) error {
	err := errOperatorSignIn
	if h.adminToken.Get() != "" {
		err = h.checkAdmin(r, r.PostFormValue("token"))
	}
	// A guess while guesses from this address are throttled is answered
	// 429, as on the admin API.
	if crtx.ErrorCode(err) == crtx.CodeRateLimited {
		return err
	} else if err != nil {
		http.Redirect(w, r, "/dashboard/operator?token=bad", http.StatusSeeOther)
		return nil
	}
	// The session is bound to the token checked, not to the one held
	// now: a SIGHUP between the two leaves the old token's session dead.
	session, err := h.market.Accounts.OpenOperatorSession(r.Context(), r.PostFormValue("token"))
	if err != nil {
		return err
	}
	h.setCookie(w, adminCookie, session, int(crtx.OperatorSessionTTL.Seconds()))
	http.Redirect(w, r, "/dashboard/operator", http.StatusSeeOther)
	return nil
}

// operatorLogout ends the operator's session.
func (h *Handler) operatorLogout(w http.ResponseWriter, r *http.Request) error {
	if v, err := h.operatorVisit(r); err == nil {
		if _, err := v.key.check(r.PostFormValue("csrf"), v.at); err == nil {
			if err := h.market.Accounts.SignOut(r.Context(), string(v.key)); err != nil {
				return err
			}
		}
	}
	h.setCookie(w, adminCookie, "", -1)
	http.Redirect(w, r, "/dashboard/operator", http.StatusSeeOther)
	return nil
}

// resolve applies the operator's ruling, which moves money when upheld:
// the form must name the slash and the refund, and be confirmed.
func (h *Handler) resolve(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	p := crtx.ResolveParams{Outcome: r.PostFormValue("outcome")}
	switch {
	case p.Outcome == "upheld" && (r.PostFormValue("slash_usdc") == "" || r.PostFormValue("refund_usdc") == ""):
		return outcome{Error: "To uphold dispute " + r.PathValue("id") + ", give the USDC to slash from the creator's collateral and the USDC of it to refund the caller (0 for none)."}, nil
	case r.PostFormValue("confirm") != "yes":
		return outcome{Error: "Dispute " + r.PathValue("id") + " is not resolved: tick the box to confirm the ruling."}, nil
	}
	for _, f := range []struct {
		name string
		dst  **crtx.USDC
	}{{"slash_usdc", &p.Slash}, {"refund_usdc", &p.Refund}} {
		if v := r.PostFormValue(f.name); v != "" {
			amount, err := crtx.ParseUSDC(v)
			if err != nil {
				return outcome{Error: f.name + ": " + err.Error()}, nil
			}
			*f.dst = &amount
		}
	}
	d, err := h.market.Disputes.ResolveDispute(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return outcome{}, err
	}
	return outcome{Notice: "Dispute " + d.ID + " " + d.Status + "."}, nil
}

func (h *Handler) verifyCreator(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	out := outcome{Landing: "/dashboard/operator#badges"}
	p, err := h.market.Listings.SetVerified(r.Context(), r.PostFormValue("wallet"), r.PostFormValue("verified") == "true")
	if err != nil {
		return out, err
	}
	out.Notice = p.Wallet + " is no longer verified."
	if p.Verified {
		out.Notice = p.Wallet + " is verified."
	}
	return out, nil
}
