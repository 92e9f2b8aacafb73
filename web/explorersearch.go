package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
)

// explorerSearch finds what a search names on env's ledger and goes to its
// page: a block height, a transaction id, an account address, or the
// account of a wallet, an execution (its escrow) or an agent (its
// listing). What names nothing gets a page that says so and offers the
// other environment.
func (h *Handler) explorerSearch(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		http.Redirect(w, r, "/explorer/?cluster="+string(env), http.StatusSeeOther)
		return nil
	}
	to := func(path string) error {
		http.Redirect(w, r, path+"?cluster="+string(env), http.StatusSeeOther)
		return nil
	}
	if height, err := crtx.ParseHeight(q); err == nil {
		return to("/explorer/block/" + strconv.FormatInt(height, 10))
	}
	if _, err := h.market.Ledger.Transaction(r.Context(), env, q); err == nil {
		return to("/explorer/tx/" + url.PathEscape(q))
	} else if notFound[crtx.ErrorCode(err)] == "" {
		return err
	}
	for _, address := range []string{q, crtx.AccountAddress(crtx.AccountWallet, q), crtx.AccountAddress(crtx.AccountEscrow, q),
		crtx.AccountAddress(crtx.AccountListing, q)} {
		if _, err := h.market.Ledger.Account(r.Context(), env, address); err == nil {
			return to("/explorer/account/" + url.PathEscape(address))
		} else if notFound[crtx.ErrorCode(err)] == "" {
			return err
		}
	}
	other := otherEnv(env)
	again := "/explorer/search?" + url.Values{"q": {q}, "cluster": {string(other)}}.Encode()
	return &guided{crtx.Errorf(crtx.CodeNotFound, "nothing on %s's ledger is named %q", env, q),
		"Search by a block height, a transaction id, an account address, a wallet address, an execution id or an agent id. Each environment keeps its own ledger.",
		[]link{{again, "Search " + string(other)}, {"/explorer/?cluster=" + string(env), "The " + string(env) + " explorer"}}}
}
