package web_test

import (
	"context"
	"crypto/ed25519"
	_ "embed"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
)

//go:embed testdata/wallet.js
var testWalletJS string

// testWallet configures testdata/wallet.js, a wallet of the Wallet
// Standard as a browser extension injects one.
type testWallet struct {
	Secret   []int    `json:"secret"`
	Name     string   `json:"name,omitempty"`
	RPC      string   `json:"rpc,omitempty"`
	Chains   []string `json:"chains,omitempty"`
	Tamper   string   `json:"tamper,omitempty"`
	NoSignIn bool     `json:"noSignIn,omitempty"`
	Reject   bool     `json:"reject,omitempty"`
}

// newTestWallet is a test wallet with a new key, and the key's address.
func newTestWallet() (testWallet, string) {
	pub, key, _ := ed25519.GenerateKey(nil)
	w := testWallet{}
	for _, b := range key.Seed() {
		w.Secret = append(w.Secret, int(b))
	}
	return w, crtx.Address(pub)
}

// script is the wallet's code with its configuration.
func (w testWallet) script() string {
	cfg, _ := json.Marshal(w)
	return "window.__testWallet = " + string(cfg) + ";\n" + testWalletJS
}

// inject has the wallet load into every page ctx opens from now on, before
// the page's own scripts, as an extension's wallet does.
func (w testWallet) inject(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, "inject wallet", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(w.script()).Do(ctx)
		return err
	}))
}

// hasCookie reports whether the browser holds the cookie name.
func hasCookie(t *testing.T, ctx context.Context, name string) bool {
	t.Helper()
	found := false
	run(t, ctx, "cookies", chromedp.ActionFunc(func(ctx context.Context) error {
		cs, err := network.GetCookies().Do(ctx)
		for _, c := range cs {
			found = found || c.Name == name
		}
		return err
	}))
	return found
}

// Signing in with a browser wallet: the sign-in page lists it with its
// name and icon, signs in through solana:signIn or, without it,
// solana:signMessage, and lands on the dashboard as the wallet's address.
// A message signed for another site or with another nonce, or a request
// the person declines, opens no session and says why in the page.
func TestWalletSignIn(t *testing.T) {
	browserCtx := browser(t)
	d := market(t)
	// tab is a new tab with w injected and no cookies.
	tab := func(t *testing.T, w testWallet) context.Context {
		ctx, cancel := chromedp.NewContext(browserCtx)
		t.Cleanup(cancel)
		run(t, ctx, "no cookies", network.ClearBrowserCookies())
		w.inject(t, ctx)
		run(t, ctx, "sign-in page", chromedp.Navigate(d.URL+"/login"), chromedp.WaitVisible(`#wallet-list button[data-wallet="Test Wallet"]`))
		return ctx
	}
	dashboard := `form[action="/dashboard/airdrop"]`

	t.Run("listed with its name and icon", func(t *testing.T) {
		w, _ := newTestWallet()
		ctx := tab(t, w)
		var shown struct{ Name, Icon, Expected string }
		run(t, ctx, "wallet shown", chromedp.Evaluate(`(() => {
			const b = document.querySelector('#wallet-list button[data-wallet="Test Wallet"]');
			const w = crtxWallet.wallets().find((w) => w.name === "Test Wallet");
			return { Name: b.textContent, Icon: b.querySelector("img").getAttribute("src"), Expected: w.icon };
		})()`, &shown))
		if shown.Name != "Test Wallet" || !strings.HasPrefix(shown.Icon, "data:image/svg+xml;base64,") || shown.Icon != shown.Expected {
			t.Errorf("the wallet is listed as %q with icon %.60q; want Test Wallet with its own icon", shown.Name, shown.Icon)
		}
		screenshot(t, ctx, "login-wallet")
		// A wallet that loads after the page registers too.
		late := w
		late.Name = "Late Wallet"
		run(t, ctx, "late wallet", chromedp.Evaluate(late.script(), nil), chromedp.WaitVisible(`#wallet-list button[data-wallet="Late Wallet"]`))
		var none bool
		run(t, ctx, "no-wallet note", chromedp.Evaluate(`document.getElementById("no-wallet").hidden`, &none))
		if !none {
			t.Error(`"No wallet found" is shown beside two wallets`)
		}
	})

	for _, c := range []struct {
		name string
		w    func(*testWallet)
	}{
		{"solana:signIn", func(*testWallet) {}},
		{"solana:signMessage without solana:signIn", func(w *testWallet) { w.NoSignIn = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, address := newTestWallet()
			c.w(&w)
			ctx := tab(t, w)
			run(t, ctx, "sign in", chromedp.Click(`#wallet-list button[data-wallet="Test Wallet"]`, chromedp.ByQuery), chromedp.WaitVisible(dashboard))
			if got := strings.TrimSpace(text(t, ctx, "main p.mono")); got != address {
				t.Errorf("the dashboard is of %q; want the wallet's %s", got, address)
			}
			var remembered string
			run(t, ctx, "remembered", chromedp.Evaluate(`localStorage.getItem("crtx-wallet-name")`, &remembered))
			if remembered != "Test Wallet" {
				t.Errorf("the wallet remembered is %q", remembered)
			}
			// Back on the sign-in page, it is the one used last.
			run(t, ctx, "back", chromedp.Navigate(d.URL+"/login"), chromedp.WaitVisible(`#wallet-list button[data-wallet="Test Wallet"]`))
			if got := text(t, ctx, `#wallet-list button[data-wallet="Test Wallet"]`); !strings.Contains(got, "last used") {
				t.Errorf("the wallet used last reads %q", got)
			}
		})
	}

	for _, c := range []struct {
		name string
		w    func(*testWallet)
		want []string
	}{
		{"message for another domain", func(w *testWallet) { w.Tamper = "domain" }, []string{"evil.example", "another service", "no session was opened"}},
		{"message with another nonce", func(w *testWallet) { w.Tamper = "nonce" }, []string{"Nonce", "never issued", "no session was opened"}},
		{"another domain by signMessage", func(w *testWallet) { w.Tamper, w.NoSignIn = "domain", true }, []string{"evil.example", "another service"}},
		{"declined", func(w *testWallet) { w.Reject = true }, []string{"You declined in Test Wallet", "nothing was signed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, _ := newTestWallet()
			c.w(&w)
			ctx := tab(t, w)
			run(t, ctx, "sign in", chromedp.Click(`#wallet-list button[data-wallet="Test Wallet"]`, chromedp.ByQuery), chromedp.WaitVisible("#wallet-status.error"))
			got := text(t, ctx, "#wallet-status")
			t.Logf("the page says: %s", got)
			for _, want := range c.want {
				if !strings.Contains(got, want) {
					t.Errorf("the page says %q; want it to say %q", got, want)
				}
			}
			var path string
			var enabled bool
			run(t, ctx, "where", chromedp.Evaluate(`location.pathname`, &path),
				chromedp.Evaluate(`!document.querySelector('#wallet-list button').disabled`, &enabled))
			if path != "/login" || hasCookie(t, ctx, "crtx_session") {
				t.Errorf("refused, yet the browser is on %s with a session cookie: %v", path, hasCookie(t, ctx, "crtx_session"))
			}
			if !enabled {
				t.Error("the wallet buttons stay disabled after the refusal")
			}
		})
	}
}
