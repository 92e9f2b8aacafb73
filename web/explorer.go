package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/crtx-market/crtx"
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

// elsewhere is a record missing from env's ledger: each environment keeps
// its own, so the page offers to look on the other.
func elsewhere(r *http.Request, env crtx.Environment, err error) error {
	if notFound[crtx.ErrorCode(err)] == "" {
		return err
	}
	other := otherEnv(env)
	return &guided{err, "It is not on " + string(env) + "'s ledger: each environment keeps its own.",
		[]link{{r.URL.Path + "?cluster=" + string(other), "Look on " + string(other)},
			{"/explorer/?cluster=" + string(env), "The " + string(env) + " explorer"}}}
}

// otherEnv is the environment whose ledger env's does not hold.
func otherEnv(env crtx.Environment) crtx.Environment {
	if env == crtx.Devnet {
		return crtx.Mainnet
	}
	return crtx.Devnet
}

func (h *Handler) explorerPage(r *http.Request, heading string, env crtx.Environment) explorerPage {
	v := h.visitor(r)
	return explorerPage{v.page(heading+" · crtx explorer", nil), env, heading}
}

func (h *Handler) explorerHome(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	blocks, err := h.market.Ledger.RecentBlocks(r.Context(), env, 20)
	if err != nil {
		return err
	}
	return h.render(w, "explorer-home", struct {
		explorerPage
		Authority string
		Blocks    []crtx.Block
	}{h.explorerPage(r, "Ledger", env), crtx.Address(h.market.AuthorityPublicKey()), blocks})
}

// explorerItem is what the account page gets: the explorer's page and
// the one thing it shows.
type explorerItem[T any] struct {
	explorerPage
	V T
}

// explorerRead serves the page of one ledger item, named by the path value
// key and read by read, with the heading that heading gives it.
func explorerRead[T any](h *Handler, tmpl, key string, heading func(T) string, read func(context.Context, crtx.Environment, string) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		env, err := cluster(r)
		if err != nil {
			return err
		}
		v, err := read(r.Context(), env, r.PathValue(key))
		if err != nil {
			return elsewhere(r, env, err)
		}
		return h.render(w, tmpl, explorerItem[T]{h.explorerPage(r, heading(v), env), v})
	}
}

func (h *Handler) explorerTx(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	t, err := h.market.Ledger.Transaction(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return elsewhere(r, env, err)
	}
	return h.render(w, "explorer-tx", struct {
		explorerPage
		V crtx.LedgerTx
		// SolanaURL is the transfer of a deposit or withdrawal on the
		// Solana explorer of env's cluster.
		SolanaURL string
	}{h.explorerPage(r, "Transaction "+string(t.Kind), env), t, transferURL(h.market.Chain(env), t)})
}

// transferURL is the Solana explorer's page of the transfer a ledger
// transaction records (a deposit's payment, a withdrawal's payout or its
// failed attempt), on chain c; empty for any other transaction, or without
// a chain.
func transferURL(c crtx.Chain, t crtx.LedgerTx) string {
	switch t.Kind {
	case crtx.TxDeposit, crtx.TxWithdrawalPaid, crtx.TxWithdrawalRefunded:
		if sig := t.Data["signature"]; sig != "" && c != nil {
			return crtx.SolanaExplorerURL(c, "tx", sig)
		}
	}
	return ""
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
	v, err := h.market.Ledger.Block(r.Context(), env, height)
	if err != nil {
		return elsewhere(r, env, err)
	}
	return h.render(w, "explorer-block", struct {
		explorerPage
		V    crtx.SealedBlock
		Prev int64
		// AnchorURL is the block's anchor on the Solana explorer; Chain
		// says whether env has a chain, whose later anchors cover a block
		// without one.
		AnchorURL string
		Chain     bool
	}{h.explorerPage(r, "Block", env), v, height - 1, anchorURL(h.market.Chain(env), v.Block.Anchor), h.market.Chain(env) != nil})
}

// anchorURL is the Solana explorer's page of a block's anchor: on the
// environment's chain c as configured, or, for an anchor written under
// another configuration (or none now), on the public cluster it names; none
// for a custom one, whose RPC address is not known here.
func anchorURL(c crtx.Chain, a *crtx.Anchor) string {
	if a == nil {
		return ""
	}
	if c != nil && c.Cluster() == a.Cluster {
		return crtx.SolanaExplorerURL(c, "tx", a.Signature)
	}
	u := "https://explorer.solana.com/tx/" + url.PathEscape(a.Signature)
	switch a.Cluster {
	case "mainnet-beta":
		return u
	case "devnet", "testnet":
		return u + "?cluster=" + a.Cluster
	}
	return ""
}
