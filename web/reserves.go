package web

import (
	"errors"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// reserveRow is one environment on the reserves page: its figures when it
// has a chain, else none.
type reserveRow struct {
	Env     crtx.Environment
	Chain   bool
	Reserve crtx.Reserve
	// TreasuryURL and TokenAccountURL are the two addresses on the Solana
	// explorer of the environment's cluster.
	TreasuryURL, TokenAccountURL string
	Short                        bool
	// Owed is what the ledger owes, for an environment without a chain.
	Owed crtx.USDC
}

// reserves shows, for each environment with a chain, what its treasury
// holds on Solana against what its ledger owes, read from the chain now;
// an environment without a chain says so. A chain that does not answer
// turns the page into a 503 that says which, not an error page, so that a
// monitor and a person read the same thing.
func (h *Handler) reserves(w http.ResponseWriter, r *http.Request) error {
	v := h.visitor(r)
	p := v.page("Reserves · crtx", nil)
	p.Description = "What the crtx treasury holds in USDC on Solana, against what the ledger owes its wallets."
	rows := []reserveRow{}
	for _, env := range crtx.Environments {
		row := reserveRow{Env: env, Chain: h.market.Chain(env) != nil}
		if !row.Chain {
			owed, err := h.market.Ledger.Owed(r.Context(), env)
			if err != nil {
				return err
			}
			row.Owed = owed
		}
		rows = append(rows, row)
	}
	status := http.StatusOK
	rs, err := h.market.Ledger.Reserves(r.Context())
	var e *crtx.Error
	switch {
	case errors.As(err, &e):
		status, p.Error = api.Status(e), message(err)
	case err != nil:
		return err
	}
	for _, res := range rs {
		for i := range rows {
			if rows[i].Env != res.Environment {
				continue
			}
			rows[i].Reserve, rows[i].Short = res, res.Surplus < 0
			if c := h.market.Chain(res.Environment); c != nil {
				rows[i].TreasuryURL = crtx.SolanaExplorerURL(c, "address", res.Treasury)
				rows[i].TokenAccountURL = crtx.SolanaExplorerURL(c, "address", res.TokenAccount)
			}
		}
	}
	return h.renderStatus(w, status, "reserves", struct {
		page
		Rows []reserveRow
	}{p, rows})
}
