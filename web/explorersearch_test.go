package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// The explorer's search goes to what it names on the ledger shown: a
// block, a transaction, a wallet's account, an execution's escrow, an
// agent's listing; what names nothing says so, with the other ledger a
// click away; a signed-in person's own account is a link away.
func TestExplorerSearch(t *testing.T) {
	d := market(t)
	bg := context.Background()
	agentID := greeter(t, d)
	caller := newCaller(t, d.URL)
	wallet := caller.wallet
	drop, err := caller.Airdrop(bg, wallet, crtx.MicroPerUSDC)
	if err != nil {
		t.Fatal(err)
	}
	key, err := caller.CreateKey(bg, client.KeyParams{Name: "k", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := client.New(d.URL, key.Key).Execute(bg, agentID, crtx.ExecuteParams{Task: "Ada"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	search := func(q, env string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(d.URL + "/explorer/search?" + url.Values{"q": {q}, "cluster": {env}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	for _, c := range []struct{ q, env, want string }{
		{"1", "devnet", "/explorer/block/1"}, // a height goes to its block, sealed yet or not
		{drop.TransactionID, "devnet", "/explorer/tx/" + drop.TransactionID},
		{wallet, "devnet", "/explorer/account/" + crtx.AccountAddress(crtx.AccountWallet, wallet)},
		{" " + rec.ExecutionID, "devnet", "/explorer/account/" + crtx.AccountAddress(crtx.AccountEscrow, rec.ExecutionID)},
		{agentID, "mainnet", "/explorer/account/" + crtx.AccountAddress(crtx.AccountListing, agentID)},
	} {
		resp, _ := search(c.q, c.env)
		if resp.Request.URL.Path != c.want || resp.Request.URL.Query().Get("cluster") != c.env || c.q != "1" && resp.StatusCode != 200 {
			t.Errorf("search %q: %d at %s, want %s on %s", c.q, resp.StatusCode, resp.Request.URL, c.want, c.env)
		}
	}
	if resp, page := search(rec.ExecutionID, "mainnet"); resp.StatusCode != 404 || !strings.Contains(page, "Search devnet") ||
		!strings.Contains(page, "execution id") {
		t.Errorf("a devnet execution searched on mainnet: %d\n%s", resp.StatusCode, page)
	}
	req, _ := http.NewRequest("GET", d.URL+"/explorer/?cluster=devnet", nil)
	req.AddCookie(&http.Cookie{Name: "crtx_session", Value: caller.session})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `href="/explorer/search?q=`+wallet+`&amp;cluster=devnet">your account</a>`) || !strings.Contains(string(page), `role="search"`) {
		t.Errorf("the explorer for a signed-in person offers no search or no way to their account:\n%s", page)
	}
}
