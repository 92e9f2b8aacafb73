package web_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/png"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/client"
)

// On a devnet with a chain, a wallet signed in with the key made in the
// browser adds funds from the dashboard: the deposit page shows the Solana
// Pay request as a QR code that decodes to exactly its solana: URL, and
// turns from awaiting payment to credited, with the transfer on the Solana
// explorer, without a reload once the request is paid on the chain. The
// wallet then withdraws to its own token account: the dashboard shows the
// withdrawal confirmed, and the token account holds the amount. Refusals
// are said on the dashboard. Both pages pass axe-core in both schemes.
func TestAddFundsAndWithdraw(t *testing.T) {
	ctx := browser(t)
	m := marketOnChain(t)
	bg := context.Background()

	run(t, ctx, "sign in", chromedp.Navigate(m.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), appears(`form[action="/dashboard/deposits"]`))
	key := browserKey(t, ctx)
	wallet := crtx.Address(key.Public().(ed25519.PublicKey))
	if shown := strings.TrimSpace(text(t, ctx, "main p.mono")); shown != wallet {
		t.Fatalf("the dashboard shows %q as the wallet, the browser's key is %s", shown, wallet)
	}
	// Money enters devnet only from its chain: no airdrop is offered.
	var airdrop bool
	run(t, ctx, "airdrop form", chromedp.Evaluate(`document.querySelector('form[action="/dashboard/airdrop"]') !== null`, &airdrop))
	if airdrop {
		t.Error("the dashboard offers the airdrop on a devnet with a chain")
	}
	ata := m.tokenAccount(t, wallet)
	if got := strings.TrimSpace(text(t, ctx, "#token-account-devnet")); got != ata {
		t.Errorf("the withdraw form says the money goes to %q, the wallet's token account is %s", got, ata)
	}
	// Before the wallet has a USDC token account, the review says so rather
	// than offer a withdrawal the marketplace would refuse.
	run(t, ctx, "review without a token account", chromedp.Navigate(m.URL+"/dashboard/withdrawals/confirm?environment=devnet&amount=2"),
		appears("main > .error"))
	if got := text(t, ctx, "main > .error"); !strings.Contains(got, "no USDC token account on Solana devnet yet") ||
		count(t, ctx, `form[action="/dashboard/withdrawals"]`) != 0 {
		t.Errorf("a review without a token account: %q", got)
	}
	m.net.Airdrop(t, wallet, 1_000_000_000)
	m.net.MintTo(t, m.mint, m.mintAuth, wallet, 30*crtx.MicroPerUSDC)

	// Add funds: the deposit page, awaiting payment.
	add := `form[action="/dashboard/deposits"] `
	run(t, ctx, "add funds", chromedp.Navigate(m.URL+"/dashboard/"), appears(add+`input[name=amount]`), chromedp.SetValue(add+`input[name=amount]`, "25", chromedp.ByQuery),
		chromedp.Click(add+`button`, chromedp.ByQuery), appears("#deposit-status"))
	if got := text(t, ctx, "#deposit-status"); !strings.Contains(got, "Status: awaiting payment") {
		t.Errorf("a new request's status reads %q", got)
	}
	var path, payURL string
	var walletButtonHidden bool
	run(t, ctx, "the request", chromedp.Evaluate(`location.pathname`, &path),
		chromedp.AttributeValue("#solana-pay-url", "href", &payURL, nil, chromedp.ByQuery),
		chromedp.Evaluate(`getComputedStyle(document.getElementById("pay-with-wallet")).display === "none"`, &walletButtonHidden))
	id := strings.TrimPrefix(path, "/dashboard/deposits/")
	d, err := client.New(m.URL, cookie(t, ctx, "crtx_session")).GetDeposit(bg, id)
	if err != nil {
		t.Fatalf("deposit %q of the page %s: %v", id, path, err)
	}
	// The page leads with the wallet on this device: "Open in wallet", the
	// request's own link, before the QR code for another device.
	var open string
	var first bool
	run(t, ctx, "open in wallet", chromedp.AttributeValue("#open-in-wallet", "href", &open, nil, chromedp.ByQuery),
		chromedp.Evaluate(`!!(document.getElementById("open-in-wallet").compareDocumentPosition(document.querySelector("figure.qr")) & Node.DOCUMENT_POSITION_FOLLOWING)`, &first))
	if open != d.SolanaPayURL || !first {
		t.Errorf("Open in wallet links %q (the request is %s), first on the page: %v", open, d.SolanaPayURL, first)
	}
	if payURL != d.SolanaPayURL || d.Amount != 25*crtx.MicroPerUSDC || text(t, ctx, "#solana-pay-url") != d.SolanaPayURL {
		t.Errorf("the page links %q, the deposit's solana_pay_url is %q (%+v)", payURL, d.SolanaPayURL, d)
	}
	if !walletButtonHidden {
		t.Error("the Pay with wallet button shows before any wallet is found")
	}
	if got := decodeQR(t, ctx, "svg.qr"); got != d.SolanaPayURL {
		t.Errorf("the QR code reads %q, want the solana_pay_url %q", got, d.SolanaPayURL)
	}
	screenshot(t, ctx, "deposit-awaiting")
	axe := axeAlongside(t)
	if axe != nil {
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, m.URL, scheme, path)
		}
	}

	// Paid on the chain, as the QR code asks, the page turns to credited
	// by itself: the marker set on it is still there, so it never reloaded.
	run(t, ctx, "the page again", emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}),
		chromedp.Navigate(m.URL+path), appears("#deposit-status"), chromedp.Evaluate(`window.samePage = true`, nil))
	req, err := crtx.ParseTransferRequest(payURL)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := chain.Pay(bg, m.net.RPC, key, req)
	if err != nil {
		t.Fatalf("pay: %v", err)
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	run(t, wait, "credited", appears(`#deposit-status .status-credited`))
	var samePage bool
	var explorer string
	run(t, ctx, "after the payment", chromedp.Evaluate(`window.samePage === true`, &samePage),
		chromedp.Evaluate(`[...document.querySelectorAll("#deposit-status a")].map(a => a.href).join(" ")`, &explorer))
	if !samePage {
		t.Error("the deposit page reloaded to show the payment")
	}
	if !strings.Contains(explorer, "https://explorer.solana.com/tx/"+sig+"?") {
		t.Errorf("the credited request links %q, not the transfer %s on the explorer", explorer, sig)
	}
	if got := text(t, ctx, "#deposit-status"); !strings.Contains(got, "✓ Status: credited") || !strings.Contains(got, "25 USDC was added to your devnet balance") ||
		count(t, ctx, "#deposit-status .ok.credited") != 1 {
		t.Errorf("the credited request reads %q, or not as a success", got)
	}
	screenshot(t, ctx, "deposit-credited")

	// Withdraw: refusals first, said as on every form; then a review of what
	// leaves, where it goes and the fee, before anything moves.
	review := func(amount string) {
		t.Helper()
		w := `form[action="/dashboard/withdrawals/confirm"] `
		run(t, ctx, "withdraw "+amount, chromedp.Navigate(m.URL+"/dashboard/"), appears(w+`input[name=amount]`),
			chromedp.SetValue(w+`input[name=amount]`, amount, chromedp.ByQuery), chromedp.Click(w+`button`, chromedp.ByQuery),
			landed("/dashboard/withdrawals/confirm"), appears(`main > .error, form[action="/dashboard/withdrawals"]`))
	}
	review("0.5")
	if got := text(t, ctx, "main > .error"); !strings.Contains(got, "A withdrawal is at least 1 USDC") {
		t.Errorf("0.5 USDC withdrawn: %q", got)
	}
	if got := text(t, ctx, `form[action="/dashboard/withdrawals/confirm"]`); !strings.Contains(got, "25 USDC available") {
		t.Errorf("the withdraw form does not say what is available: %q", got)
	}
	review("1000")
	if got := text(t, ctx, "main > .error"); !strings.Contains(got, "has 25 USDC available; the withdrawal needs 1000 USDC") {
		t.Errorf("more than the balance withdrawn: %q", got)
	}
	// Max asks for all that is available; going back moves nothing.
	run(t, ctx, "max", chromedp.Navigate(m.URL+"/dashboard/"), appears(`button[name=all]`),
		chromedp.Click(`button[name=all]`, chromedp.ByQuery), landed("all=1"), appears(`form[action="/dashboard/withdrawals"]`))
	if got := text(t, ctx, "main table"); !strings.Contains(got, "25 USDC") || !strings.Contains(got, "Left after\t0 USDC") && !strings.Contains(got, "Left after 0 USDC") {
		t.Errorf("Max reviews:\n%s", got)
	}
	review("10")
	confirm := text(t, ctx, "main table")
	for _, want := range []string{"10 USDC", ata, "0.000005 SOL, paid by the marketplace", "15 USDC"} {
		if !strings.Contains(confirm, want) {
			t.Errorf("the review of a 10 USDC withdrawal lacks %q:\n%s", want, confirm)
		}
	}
	screenshot(t, ctx, "withdraw-review")
	run(t, ctx, "confirm", chromedp.Click(`form[action="/dashboard/withdrawals"] button`, chromedp.ByQuery), landed("sent="), appears("main > .ok"))
	if got := text(t, ctx, "main > .ok"); !strings.Contains(got, "10 USDC is on its way to your token account "+ata) {
		t.Errorf("the withdrawal's notice: %q", got)
	}
	var landing string
	run(t, ctx, "landing", chromedp.Evaluate(`location.href`, &landing))
	run(t, ctx, "mark", chromedp.Evaluate(`window.samePage = true`, nil))
	run(t, wait, "confirmed", appears(`#withdrawals-devnet [data-withdrawal] .status-confirmed`))
	run(t, ctx, "after the withdrawal", chromedp.Evaluate(`window.samePage === true`, &samePage),
		chromedp.Evaluate(`[...document.querySelectorAll("#withdrawals-devnet a")].map(a => a.href).join(" ")`, &explorer))
	if !samePage || !strings.HasPrefix(explorer, "https://explorer.solana.com/tx/") {
		t.Errorf("the withdrawal turned confirmed in place: %v, linking %q", samePage, explorer)
	}
	// Confirmed, the page no longer says it is on its way.
	run(t, ctx, "reload", chromedp.Navigate(landing), appears(`#withdrawals-devnet [data-withdrawal] .status-confirmed`))
	if n := count(t, ctx, "main > .ok"); n != 0 {
		t.Errorf("the confirmed withdrawal is still said to be on its way: %q", text(t, ctx, "main > .ok"))
	}
	if held := m.net.TokenBalance(t, ata); held != 15*crtx.MicroPerUSDC {
		t.Errorf("the wallet's token account holds %s after paying 25 of 30 and withdrawing 10, want 15", held)
	}
	wb, err := client.New(m.URL, cookie(t, ctx, "crtx_session")).Wallet(bg)
	if err != nil || wb.Balances[crtx.Devnet].Available != 15*crtx.MicroPerUSDC {
		t.Errorf("balance after withdrawing: %+v, %v", wb, err)
	}
	screenshot(t, ctx, "dashboard-funds")
	// On a phone: nothing wider than the screen, the QR code above the rest.
	run(t, ctx, "narrow", emulation.SetDeviceMetricsOverride(375, 800, 2, true))
	for _, p := range []string{"/dashboard/", path, "/dashboard/withdrawals/confirm?environment=devnet&amount=2"} {
		var width int
		run(t, ctx, "narrow "+p, chromedp.Navigate(m.URL+p), chromedp.WaitReady("body"),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &width))
		if width > 375 {
			t.Errorf("%s is %d px wide at 375 px", p, width)
		}
	}
	screenshot(t, ctx, "deposit-375")
	run(t, ctx, "wide", emulation.ClearDeviceMetricsOverride())
	if axe != nil {
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, m.URL, scheme, "/dashboard/", path, "/dashboard/withdrawals/confirm?environment=devnet&amount=2")
		}
	}
}

// browserKey is the wallet key the sign-in page made and keeps in the
// browser's storage, as a JWK.
func browserKey(t *testing.T, ctx context.Context) ed25519.PrivateKey {
	t.Helper()
	var stored string
	run(t, ctx, "the browser's key", chromedp.Evaluate(`localStorage.getItem("crtx-wallet")`, &stored))
	var jwk struct{ D string }
	if err := json.Unmarshal([]byte(stored), &jwk); err != nil {
		t.Fatalf("the browser keeps %q: %v", stored, err)
	}
	seed, err := base64.RawURLEncoding.DecodeString(jwk.D)
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("the browser's key %q: %v", jwk.D, err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// decodeQR reads the QR code an element of the page draws, from a picture
// of it as the browser renders it.
func decodeQR(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var png []byte
	// At three pixels to the page's one, as a phone's camera sees a screen.
	run(t, ctx, "picture of "+sel, chromedp.ScreenshotScale(sel, 3, &png, chromedp.ByQuery))
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().DecodeWithoutHints(bmp)
	if err != nil {
		t.Fatalf("the QR code of %s does not decode: %v", sel, err)
	}
	return res.GetText()
}
