package web

import (
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// cluster reads ?cluster=, as Solana explorers do; mainnet when absent.
func cluster(r *http.Request) (crtx.Environment, error) {
	c := r.URL.Query().Get("cluster")
	if c == "" {
		return crtx.Mainnet, nil
	}
	return crtx.ParseEnvironment("cluster", c)
}

// explorerPage is what every explorer template gets: the site's page and
// the ledger it shows.
type explorerPage struct {
	page
	Env     crtx.Environment
	Heading string
}

func (h *Handler) explorerPage(r *http.Request, heading string, env crtx.Environment) explorerPage {
	wallet, csrf, _ := h.session(r)
	return explorerPage{page{Title: heading + " · crtx explorer", Wallet: wallet, CSRF: csrf}, env, heading}
}

func (h *Handler) explorerHome(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	blocks, err := h.market.RecentBlocks(r.Context(), env, 20)
	if err != nil {
		return err
	}
	return h.render(w, "explorer-home", struct {
		explorerPage
		Authority string
		Blocks    []crtx.Block
	}{h.explorerPage(r, "Ledger", env), crtx.Address(h.market.AuthorityPublicKey()), blocks})
}

func (h *Handler) explorerAccount(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	v, err := h.market.Account(r.Context(), env, r.PathValue("address"))
	if err != nil {
		return err
	}
	return h.render(w, "explorer-account", struct {
		explorerPage
		V api.AccountView
	}{h.explorerPage(r, "Account", env), v})
}

func (h *Handler) explorerTransaction(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	t, err := h.market.Transaction(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.render(w, "explorer-tx", struct {
		explorerPage
		T    crtx.LedgerTx
		Hash string
	}{h.explorerPage(r, "Transaction "+string(t.Kind), env), t, t.Hash().String()})
}

func (h *Handler) explorerBlock(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	height, err := crtx.ParseHeight(r.PathValue("height"))
	if err != nil {
		return err
	}
	v, err := h.market.Block(r.Context(), env, height)
	if err != nil {
		return err
	}
	return h.render(w, "explorer-block", struct {
		explorerPage
		V    api.BlockView
		Prev int64
	}{h.explorerPage(r, "Block", env), v, height - 1})
}
