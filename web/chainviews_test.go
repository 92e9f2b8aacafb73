package web

import (
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// The figures of a chain, as the reserves page lays them out: the two
// addresses linked to the Solana explorer, the amounts, the anchored block
// linked to the explorer's block, and a surplus below zero said in words,
// not only in a colour.
func TestReservesFigures(t *testing.T) {
	h := &Handler{pages: map[string]*template.Template{"reserves": parsePage("reserves")}}
	checked := time.Date(2026, 11, 25, 15, 20, 3, 0, time.UTC)
	row := func(env crtx.Environment, surplus crtx.USDC, anchored int64) reserveRow {
		r := crtx.Reserve{Environment: env, Treasury: "7vzEoA6qPLqGXe5rxmMK7iha63znnLfwGppBrUfELajg", TokenAccount: "54HvFndo5NnQGDtU3xNnN6eHyeRACaRe9eo18N3oQCg7",
			OnChain: 1_250_500_000, Liabilities: 1_250_500_000 - surplus, Surplus: surplus, AnchoredBlock: anchored, Cluster: "devnet", CheckedAt: checked}
		return reserveRow{Env: env, Chain: true, Reserve: r, Short: surplus < 0,
			TreasuryURL:     "https://explorer.solana.com/address/" + r.Treasury + "?cluster=devnet",
			TokenAccountURL: "https://explorer.solana.com/address/" + r.TokenAccount + "?cluster=devnet"}
	}
	render := func(rows ...reserveRow) string {
		t.Helper()
		b, err := h.execute("reserves", struct {
			page
			Rows []reserveRow
		}{page{Title: "Reserves · crtx"}, rows})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	body := render(reserveRow{Env: crtx.Mainnet}, row(crtx.Devnet, 2_250_000, 1874))
	for _, want := range []string{
		"mainnet has no chain: its money lives on the crtx ledger alone, and nothing is held on Solana for it.",
		`<a href="https://explorer.solana.com/address/7vzEoA6qPLqGXe5rxmMK7iha63znnLfwGppBrUfELajg?cluster=devnet">7vzEoA6qPLqGXe5rxmMK7iha63znnLfwGppBrUfELajg</a>`,
		`<a href="https://explorer.solana.com/address/54HvFndo5NnQGDtU3xNnN6eHyeRACaRe9eo18N3oQCg7?cluster=devnet">54HvFndo5NnQGDtU3xNnN6eHyeRACaRe9eo18N3oQCg7</a>`,
		`<td class="num">1250.5 USDC</td>`, `<td class="num">1248.25 USDC</td>`, `<td class="num">2.25 USDC</td>`,
		`<a href="/explorer/block/1874?cluster=devnet">1874</a>`, "2026-11-25 15:20:03Z", `<a href="/reserves">Reserves</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the reserves page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "below zero, the treasury holds") {
		t.Error("a surplus above zero is called short")
	}
	short := render(row(crtx.Mainnet, -1_000_000, 0), row(crtx.Devnet, 0, 3))
	for _, want := range []string{"-1 USDC: below zero, the treasury holds less than the ledger owes", "none yet"} {
		if !strings.Contains(short, want) {
			t.Errorf("a short treasury's page lacks %q:\n%s", want, short)
		}
	}
	if strings.Count(short, "below zero, the treasury holds") != 1 {
		t.Error("a surplus of exactly zero is called short")
	}
}

// A block's anchor shows on its explorer page, linked to the Solana
// explorer of its cluster; a block without one, where the environment has
// a chain, says the next anchored block covers it; without a chain, the
// page says nothing of anchors.
func TestBlockAnchor(t *testing.T) {
	h := &Handler{pages: map[string]*template.Template{"explorer-block": parsePage("explorer-block")}}
	sig := "2soASZVz6NaEUZtRyCbf3hAdpPAAiecRovUSi99FFw9GJGQTbdoPFaFctNx1Nzt2FzPMLj5JjBnkXJm6CGofULNX"
	anchor := &crtx.Anchor{Signature: sig, Slot: 412345678, Cluster: "devnet"}
	render := func(a *crtx.Anchor, chain bool) string {
		t.Helper()
		b := crtx.Block{Environment: crtx.Devnet, Height: 7, PrevHash: crtx.GenesisPrevHash, MerkleRoot: crtx.GenesisPrevHash, TxCount: 0,
			SealedAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), Version: 2, Anchor: a}
		out, err := h.execute("explorer-block", struct {
			explorerPage
			V         api.BlockView
			Prev      int64
			AnchorURL string
			Chain     bool
		}{explorerPage{page{Title: "Block"}, crtx.Devnet, "Block"}, api.BlockView{Block: b}, 6, anchorURL(nil, a), chain})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if body := render(anchor, true); !strings.Contains(body, `<a href="https://explorer.solana.com/tx/`+sig+`?cluster=devnet">`+sig+`</a>`) ||
		!strings.Contains(body, "Solana devnet, slot 412345678") {
		t.Errorf("an anchored block:\n%s", body)
	}
	if body := render(nil, true); !strings.Contains(body, "not anchored itself: the next anchored block covers it through the hash chain") {
		t.Errorf("a block not anchored itself, with a chain:\n%s", body)
	}
	if body := render(nil, false); strings.Contains(body, "anchor") {
		t.Errorf("a block without a chain speaks of anchors:\n%s", body)
	}
	// A custom cluster's explorer needs its RPC address, which only the
	// configured chain knows.
	for a, want := range map[crtx.Anchor]string{
		{Signature: "s", Cluster: "mainnet-beta"}: "https://explorer.solana.com/tx/s",
		{Signature: "s", Cluster: "testnet"}:      "https://explorer.solana.com/tx/s?cluster=testnet",
		{Signature: "s", Cluster: "custom"}:       "",
	} {
		if got := anchorURL(nil, &a); got != want {
			t.Errorf("anchorURL(%+v) = %q, want %q", a, got, want)
		}
	}
}

// A deposit's or withdrawal's ledger transaction links its signature to
// the Solana explorer; without a chain, or for another kind of
// transaction (an ExecutionRecord's signature is the creator's), nothing
// is linked.
func TestTransferLink(t *testing.T) {
	h := &Handler{pages: map[string]*template.Template{"explorer-tx": parsePage("explorer-tx")}}
	sig := "2soASZVz6NaEUZtRyCbf3hAdpPAAiecRovUSi99FFw9GJGQTbdoPFaFctNx1Nzt2FzPMLj5JjBnkXJm6CGofULNX"
	deposit := crtx.LedgerTx{ID: "3GkN4bR7xVq2Ls9DkPz5TmWc8YhJ6aF3e", Environment: crtx.Devnet, Kind: crtx.TxDeposit,
		Data: map[string]string{"signature": sig, "deposit_id": "dep_7Hq2LmXw9TzKp4VbN8RcYd3F"}, Version: 2}
	render := func(tx crtx.LedgerTx, solana string) string {
		t.Helper()
		out, err := h.execute("explorer-tx", struct {
			explorerPage
			V         crtx.LedgerTx
			SolanaURL string
		}{explorerPage{page{Title: "Transaction"}, crtx.Devnet, "Transaction"}, tx, solana})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	link := "https://explorer.solana.com/tx/" + sig + "?cluster=devnet"
	if body := render(deposit, link); !strings.Contains(body, `<a href="`+link+`">`+sig+`</a> <span class="muted">on Solana</span>`) ||
		strings.Contains(body, `<a href="`+link+`">dep_`) {
		t.Errorf("a deposit's transfer:\n%s", body)
	}
	if body := render(deposit, ""); strings.Contains(body, "explorer.solana.com") || !strings.Contains(body, sig) {
		t.Errorf("a deposit without a chain:\n%s", body)
	}
	record := deposit
	record.Kind = crtx.TxExecutionRecord
	for _, tx := range []crtx.LedgerTx{deposit, record} {
		if u := transferURL(nil, tx); u != "" {
			t.Errorf("%s without a chain links %s", tx.Kind, u)
		}
	}
}
