package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// A person with a browser wallet (the Wallet Standard's, holding USDC on a
// local Solana network) signs in with it, adds funds, and pays with "Pay
// with Test Wallet": the page asks the deposit's Solana Pay transaction
// request for the transfer, the wallet signs and sends it, and the page
// turns credited by itself with that transaction. The wallet then
// withdraws, and its token account on the chain grows by the amount.
func TestPayWithWallet(t *testing.T) {
	ctx := browser(t)
	m := marketOnChain(t)
	bg := context.Background()
	w, address := newTestWallet()
	w.RPC, w.Chains = m.net.RPC, []string{"solana:localnet"}
	m.net.Airdrop(t, address, 1_000_000_000)
	m.net.MintTo(t, m.mint, m.mintAuth, address, 20*crtx.MicroPerUSDC)
	// The wallet sends from its own context, as an extension does, not
	// under the page's Content-Security-Policy.
	run(t, ctx, "bypass CSP", page.SetBypassCSP(true))
	w.inject(t, ctx)

	run(t, ctx, "sign in with the wallet", chromedp.Navigate(m.URL+"/login"),
		appears(`#wallet-list button[data-wallet="Test Wallet"]`),
		chromedp.Click(`#wallet-list button[data-wallet="Test Wallet"]`, chromedp.ByQuery),
		appears(`form[action="/dashboard/deposits"]`))
	if shown := strings.TrimSpace(text(t, ctx, "main p.mono")); shown != address {
		t.Fatalf("the dashboard is of %q; the wallet is %s", shown, address)
	}
	add := `form[action="/dashboard/deposits"] `
	run(t, ctx, "add funds", chromedp.SetValue(add+`input[name=amount]`, "12", chromedp.ByQuery),
		chromedp.Click(add+`button`, chromedp.ByQuery), appears("#pay-with-wallet"))
	var path string
	run(t, ctx, "deposit page", chromedp.Evaluate(`location.pathname`, &path))
	if got := strings.TrimSpace(text(t, ctx, "#pay-with-wallet")); got != "Pay with Test Wallet" {
		t.Errorf("the button reads %q", got)
	}
	if axe := axeAlongside(t); axe != nil {
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, m.URL, scheme, path)
		}
		run(t, ctx, "wallet button", appears("#pay-with-wallet"))
	}
	screenshot(t, ctx, "deposit-pay-with-wallet")

	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var said string
	run(t, wait, "pay", chromedp.Evaluate(`window.samePage = true`, nil), chromedp.Click("#pay-with-wallet", chromedp.ByQuery),
		chromedp.Poll(`(() => { const s = document.getElementById("pay-status").textContent; return s.startsWith("Sent") || s.includes("could") ? s : false; })()`, &said))
	sent := regexp.MustCompile(`^Sent as Solana transaction (\w+)\.`).FindStringSubmatch(said)
	if sent == nil {
		t.Fatalf("after paying, the page says %q", said)
	}
	run(t, wait, "credited", appears(`#deposit-status .status-credited`))
	var samePage, hidden bool
	run(t, ctx, "after paying", chromedp.Evaluate(`window.samePage === true`, &samePage),
		chromedp.Evaluate(`document.getElementById("pay-with-wallet").hidden`, &hidden))
	if !samePage || !hidden || text(t, ctx, "#pay-status") != "" {
		t.Fatalf("once credited: same page %v, button hidden %v, the page still says %q", samePage, hidden, text(t, ctx, "#pay-status"))
	}
	c := client.New(m.URL, cookie(t, ctx, "crtx_session"))
	ds, err := c.Deposits(bg, crtx.Devnet, 10, 0)
	if err != nil || len(ds.Deposits) != 1 {
		t.Fatalf("deposits: %+v, %v", ds, err)
	}
	d, err := c.GetDeposit(bg, ds.Deposits[0].DepositID)
	if err != nil || d.Credited != 12*crtx.MicroPerUSDC || len(d.Payments) != 1 || d.Payments[0].Signature != sent[1] {
		t.Fatalf("the deposit %+v (%v); the wallet sent %s", d, err, sent[1])
	}
	if !strings.Contains(text(t, ctx, "#deposit-status"), sent[1]) {
		t.Error("the credited page does not link the wallet's transaction")
	}
	screenshot(t, ctx, "deposit-paid-with-wallet")

	// Withdrawn to the wallet's own token account on the chain.
	ata := m.tokenAccount(t, address)
	wf := `form[action="/dashboard/withdrawals/confirm"] `
	run(t, ctx, "withdraw", chromedp.Navigate(m.URL+"/dashboard/"), appears(wf+`input[name=amount]`),
		chromedp.SetValue(wf+`input[name=amount]`, "5", chromedp.ByQuery), chromedp.Click(wf+`button`, chromedp.ByQuery),
		landed("/dashboard/withdrawals/confirm"), appears(`form[action="/dashboard/withdrawals"] button`),
		chromedp.Click(`form[action="/dashboard/withdrawals"] button`, chromedp.ByQuery), landed("sent="), appears(`main > .ok`))
	run(t, wait, "confirmed", appears(`#withdrawals-devnet [data-withdrawal] .status-confirmed`))
	if held := m.net.TokenBalance(t, ata); held != 13*crtx.MicroPerUSDC {
		t.Errorf("the wallet's token account holds %s after paying 12 of 20 and withdrawing 5, want 13", held)
	}
}
