package web

import (
	"crypto/subtle"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// operator pages are behind an operator session, opened with the admin
// token and kept in a cookie of its own; it returns the session's token.
func (h *Handler) isOperator(r *http.Request) (string, bool) {
	c, err := r.Cookie(adminCookie)
	if err != nil || h.adminToken == "" || !h.market.IsOperatorSession(r.Context(), c.Value, h.adminToken) {
		return "", false
	}
	return c.Value, true
}

type operatorData struct {
	Disputes []api.DisputeInfo
}

func (h *Handler) operator(w http.ResponseWriter, r *http.Request) error {
	if h.adminToken == "" {
		return crtx.Errorf(crtx.CodeNotFound, "the admin API is off: start crtxd with --admin-token-file")
	}
	if _, ok := h.isOperator(r); !ok {
		return h.render(w, "operator-login", page{Title: "Operator — crtx"})
	}
	return h.renderOperator(w, r, page{})
}

func (h *Handler) renderOperator(w http.ResponseWriter, r *http.Request, p page) error {
	ds, err := h.market.Disputes(r.Context(), crtx.DisputeQuery{Status: "open", Limit: 500})
	if err != nil {
		return err
	}
	d := operatorData{}
	for _, x := range ds {
		d.Disputes = append(d.Disputes, api.NewDisputeInfo(x))
	}
	session, _ := h.isOperator(r)
	p.Title, p.Data, p.CSRF = "Operator — crtx", d, csrfFor(session)
	return h.render(w, "operator", p)
}

func (h *Handler) operatorLogin(w http.ResponseWriter, r *http.Request) error {
	if h.adminToken == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(h.adminToken)) != 1 {
		return h.render(w, "operator-login", page{Title: "Operator — crtx", Error: "That is not the admin token."})
	}
	session, err := h.market.OpenOperatorSession(r.Context(), h.adminToken)
	if err != nil {
		return err
	}
	h.setCookie(w, adminCookie, session, int(crtx.OperatorSessionTTL.Seconds()))
	http.Redirect(w, r, "/dashboard/operator", http.StatusSeeOther)
	return nil
}

// operatorLogout ends the operator's session.
func (h *Handler) operatorLogout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(adminCookie); err == nil && h.operatorForm(r) == nil {
		if err := h.market.SignOut(r.Context(), c.Value); err != nil {
			return err
		}
	}
	h.setCookie(w, adminCookie, "", -1)
	http.Redirect(w, r, "/dashboard/operator", http.StatusSeeOther)
	return nil
}

func (h *Handler) operatorForm(r *http.Request) error {
	session, ok := h.isOperator(r)
	if !ok || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(csrfFor(session))) != 1 {
		return crtx.Errorf(crtx.CodeInvalidAPIKey, "sign in as the operator first")
	}
	return nil
}

func (h *Handler) resolve(w http.ResponseWriter, r *http.Request) error {
	if err := h.operatorForm(r); err != nil {
		return err
	}
	p := crtx.ResolveParams{Outcome: r.PostFormValue("outcome")}
	for _, f := range []struct {
		name string
		dst  **crtx.USDC
	}{{"slash_usdc", &p.Slash}, {"refund_usdc", &p.Refund}} {
		if v := r.PostFormValue(f.name); v != "" {
			amount, err := crtx.ParseUSDC(v)
			if err != nil {
				return h.renderOperator(w, r, page{Error: f.name + ": " + err.Error()})
			}
			*f.dst = &amount
		}
	}
	d, err := h.market.ResolveDispute(r.Context(), r.PathValue("id"), p)
	if err != nil {
		if !isUserError(err) {
			return err
		}
		return h.renderOperator(w, r, page{Error: message(err)})
	}
	return h.renderOperator(w, r, page{Notice: "Dispute " + d.ID + " " + d.Status + "."})
}

func (h *Handler) verifyCreator(w http.ResponseWriter, r *http.Request) error {
	if err := h.operatorForm(r); err != nil {
		return err
	}
	p, err := h.market.SetVerified(r.Context(), r.PostFormValue("wallet"), r.PostFormValue("verified") == "true")
	if err != nil {
		if !isUserError(err) {
			return err
		}
		return h.renderOperator(w, r, page{Error: message(err)})
	}
	state := "no longer verified"
	if p.Verified {
		state = "verified"
	}
	return h.renderOperator(w, r, page{Notice: p.Wallet + " is " + state + "."})
}
