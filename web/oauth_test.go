package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/internal/nodetest"
)

// An MCP host adds crtx as a connector with the official TypeScript SDK's
// OAuth client, and its person consents in Chromium: the authorization URL
// leads to the wallet sign-in, which says why and comes back to the consent
// page; the person keeps devnet, sets a spend limit and allows. The host
// then runs an agent with its token, and refreshes it once it has expired.
// The key it holds is the person's, listed on the keys page as a connector
// with the limit chosen.
func TestOAuthConnectorInTheBrowser(t *testing.T) {
	var by atomic.Int64
	d := market(t, func(c *daemon.Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(by.Load())) }
	})
	agent := greeter(t, d)
	w, address := newTestWallet()
	if _, err := client.New(d.URL, "").Airdrop(context.Background(), address, 10*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}

	runCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := nodetest.ScriptOf(runCtx, t, "mcp-oauth.mjs", []nodetest.Package{{Modules: "CRTX_MCP_CLIENT", Name: "@modelcontextprotocol/client"}},
		"CRTX_URL="+d.URL, "CRTX_AGENT_ID="+agent)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, closeTab := chromedp.NewContext(browser(t))
	defer closeTab()
	run(t, ctx, "no cookies", network.ClearBrowserCookies())
	w.inject(t, ctx)

	consented, done := false, false
	nodetest.Converse(t, cmd, map[string]func(string){
		"authorize": func(u string) {
			if !strings.HasPrefix(u, d.URL+"/oauth/authorize?") {
				t.Fatalf("the SDK sends its person to %s", u)
			}
			run(t, ctx, "authorization URL", chromedp.Navigate(u), landed("/login"),
				appears(`#wallet-list button[data-wallet="Test Wallet"]`))
			if got := text(t, ctx, "main [role=status]"); !strings.Contains(got, "Interop Host asks to connect to crtx") {
				t.Errorf("the sign-in page says %q; want why the person is asked to sign in, naming the app", got)
			}
			run(t, ctx, "sign in", chromedp.Click(`#wallet-list button[data-wallet="Test Wallet"]`, chromedp.ByQuery),
				landed("/oauth/authorize"), appears(`button[value=allow]`))
			if got := text(t, ctx, "h1"); got != "Connect Interop Host to crtx" {
				t.Errorf("the consent page's heading is %q", got)
			}
			var env string
			run(t, ctx, "default environment", chromedp.Evaluate(`document.querySelector('input[name=environment]:checked').value`, &env))
			if env != "devnet" {
				t.Errorf("the environment chosen by default is %q, want devnet", env)
			}
			screenshot(t, ctx, "oauth-consent")
			run(t, ctx, "consent", chromedp.SetValue(`input[name=spend_limit]`, "0.2", chromedp.ByQuery),
				chromedp.Click(`button[value=allow]`, chromedp.ByQuery), landed("/callback?"))
			if got := text(t, ctx, "p"); !strings.Contains(got, "crtx is connected") {
				t.Errorf("the callback page says %q", got)
			}
			consented = true
		},
		"expire": func(string) {
			by.Add(int64(crtx.AccessTokenTTL + time.Minute))
			fmt.Fprintln(stdin, "expired")
		},
		"done": func(string) { done = true },
	})
	if !consented || !done {
		t.Fatalf("the host stopped early: consented %v, done %v", consented, done)
	}
	io.WriteString(stdin, "")

	seed := make([]byte, len(w.Secret))
	for i, b := range w.Secret {
		seed[i] = byte(b)
	}
	person, _, err := client.New(d.URL, "").SignIn(context.Background(), ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := person.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].Client == "" || keys[0].Name != "Interop Host (MCP connector)" || keys[0].Environment != crtx.Devnet ||
		keys[0].SpendLimit == nil || *keys[0].SpendLimit != 200_000 || keys[0].ExecutionCount != 1 {
		t.Fatalf("the person's keys: %+v; want the connector's devnet key, limited to 0.2 USDC, with its one run", keys)
	}
	run(t, ctx, "keys page", chromedp.Navigate(d.URL+"/dashboard/keys"), appears("table.rows"))
	if got := text(t, ctx, "table.rows"); !strings.Contains(got, "Interop Host (MCP connector) connector") {
		t.Errorf("the keys page lists %q; want the connector's key, marked", got)
	}
}

// consentPath is the consent page of a client registered for the purpose.
func consentPath(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"Page Host","redirect_uris":["https://host.example/callback"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || reg.ClientID == "" {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	return "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {"https://host.example/callback"},
		"code_challenge": {strings.Repeat("A", 43)}, "code_challenge_method": {"S256"}, "state": {"s"}}.Encode()
}

// The sign-in an app's connection leads to names the app, as it
// registered: a name written into the sign-in page's own address is not
// shown.
func TestConnectSignInNamesTheApp(t *testing.T) {
	d := market(t)
	consent := consentPath(t, d.URL)
	if page := get(t, d.URL+"/login?connect=1&next="+url.QueryEscape(consent)); !strings.Contains(page, "Page Host asks to connect to crtx") {
		t.Error("the sign-in for a connection does not name the app")
	}
	forged := "/oauth/authorize?client_id=nobody&client_name=Bank"
	if page := get(t, d.URL+"/login?connect=Bank&next="+url.QueryEscape(forged)); strings.Contains(page, "Bank asks") ||
		!strings.Contains(page, "An app asks to connect to crtx") {
		t.Error("the sign-in names an app it was told of in its own address")
	}
}
