package web_test

import (
	"context"
	"crypto/ed25519"
	_ "embed"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
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
		run(t, ctx, "sign-in page", chromedp.Navigate(d.URL+"/login"), appears(`#wallet-list button[data-wallet="Test Wallet"]`))
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
		run(t, ctx, "late wallet", chromedp.Evaluate(late.script(), nil), appears(`#wallet-list button[data-wallet="Late Wallet"]`))
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
			run(t, ctx, "sign in", chromedp.Click(`#wallet-list button[data-wallet="Test Wallet"]`, chromedp.ByQuery), appears(dashboard))
			if got := strings.TrimSpace(text(t, ctx, "main p.mono")); got != address {
				t.Errorf("the dashboard is of %q; want the wallet's %s", got, address)
			}
			var remembered string
			run(t, ctx, "remembered", chromedp.Evaluate(`localStorage.getItem("crtx-wallet-name")`, &remembered))
			if remembered != "Test Wallet" {
				t.Errorf("the wallet remembered is %q", remembered)
			}
			// Back on the sign-in page, it is the one used last.
			run(t, ctx, "back", chromedp.Navigate(d.URL+"/login"), appears(`#wallet-list button[data-wallet="Test Wallet"]`))
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
			run(t, ctx, "sign in", chromedp.Click(`#wallet-list button[data-wallet="Test Wallet"]`, chromedp.ByQuery), appears("#wallet-status.error"))
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

// crtxWallet.signAndSendTransaction, which the dashboards pay with, has the
// wallet sign a transaction the page built and send it: a transfer lands on
// a local Solana network. Asked for another network than the wallet's, it
// says so and sends nothing.
func TestWalletSignAndSendTransaction(t *testing.T) {
	browserCtx := browser(t)
	n := chaintest.Start(t)
	d := market(t)
	w, address := newTestWallet()
	w.RPC = n.RPC
	n.Airdrop(t, address, solana.LAMPORTS_PER_SOL)
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	// The wallet sends from its own context, as an extension does, not
	// under the page's Content-Security-Policy.
	run(t, ctx, "bypass CSP", page.SetBypassCSP(true))
	w.inject(t, ctx)
	run(t, ctx, "page with wallet.js", chromedp.Navigate(d.URL+"/login"), appears(`#wallet-list button[data-wallet="Test Wallet"]`))

	to := chaintest.Address(chaintest.NewKey(t))
	client := rpc.New(n.RPC)
	latest, err := client.GetLatestBlockhash(context.Background(), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	payer := solana.MustPublicKeyFromBase58(address)
	tx, err := solana.NewTransaction([]solana.Instruction{system.NewTransferInstruction(1_000_000, payer, solana.MustPublicKeyFromBase58(to)).Build()},
		latest.Value.Blockhash, solana.TransactionPayer(payer))
	if err != nil {
		t.Fatal(err)
	}
	tx.Signatures = make([]solana.Signature, tx.Message.Header.NumRequiredSignatures) // unsigned: the wallet signs
	wire, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	send := func(chain string) (out struct{ Signature, Error string }) {
		bytes, _ := json.Marshal(wire)
		run(t, ctx, "send on "+chain, chromedp.Evaluate(`(async () => {
			const w = crtxWallet.wallets().find((w) => w.name === "Test Wallet");
			const [account] = await crtxWallet.connect(w);
			const tx = Uint8Array.from(atob(`+string(bytes)+`), (c) => c.charCodeAt(0));
			try { return { Signature: await crtxWallet.signAndSendTransaction(w, account, tx, "`+chain+`") }; }
			catch (e) { return { Error: e.message }; }
		})()`, &out, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
		return out
	}
	if out := send("solana:mainnet"); !strings.Contains(out.Error, "not set to Solana mainnet") {
		t.Errorf("sent for mainnet with a devnet wallet: %+v", out)
	}
	out := send("solana:devnet")
	if out.Error != "" {
		t.Fatalf("signAndSendTransaction: %s", out.Error)
	}
	sig := solana.MustSignatureFromBase58(out.Signature)
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		bal, err := client.GetBalance(context.Background(), solana.MustPublicKeyFromBase58(to), rpc.CommitmentConfirmed)
		if err == nil && bal.Value == 1_000_000 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("transaction %s: the recipient holds %v lamports (%v); want 1000000", sig, bal, err)
		}
	}
	if !ed25519.Verify(payer[:], mustMessage(t, tx), sig[:]) {
		t.Error("the signature returned is not the wallet's of the transaction's message")
	}
}

func mustMessage(t *testing.T, tx *solana.Transaction) []byte {
	t.Helper()
	b, err := tx.Message.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
