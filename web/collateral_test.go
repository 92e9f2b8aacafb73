package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/crtx-market/crtx/client"
)

// A creator's dashboard says what its listings lock as collateral, beside
// the available balance, listing by listing with when it returns, and how
// to add funds to an environment without a chain.
func TestDashboardShowsLockedCollateral(t *testing.T) {
	d := market(t)
	id, session := greeterOf(t, d)
	b := dashboard{t, d, session}
	page := b.do("GET", "/dashboard/", nil)
	for _, want := range []string{"90 USDC", "10 USDC locked as collateral", `id="collateral"`, "Greeter", "72 hours after you delist it",
		"Add mainnet funds", "crtxd ledger deposit --environment mainnet --wallet "} {
		if !strings.Contains(page, want) {
			t.Errorf("the dashboard lacks %q", want)
		}
	}
	if _, err := client.New(d.URL, session).Delist(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if page := b.do("GET", "/dashboard/", nil); !strings.Contains(page, "from 20") || !strings.Contains(page, "10 USDC locked as collateral") {
		t.Errorf("the dashboard of a delisted listing's collateral says not from when it returns")
	}
}

// Every page's footer leads to the docs for creators, the fees and the
// sign-in; /docs says the fee the marketplace takes; a browser with no
// wallet is shown where to get one.
func TestFooterAndFees(t *testing.T) {
	d := market(t)
	home := get(t, d.URL+"/")
	for _, link := range []string{`href="/docs#tag-creators"`, `href="/docs#fees"`, `href="/login"`} {
		if !strings.Contains(home[strings.Index(home, "<footer>"):], link) {
			t.Errorf("the footer lacks %s", link)
		}
	}
	// "No wallet found" leads to the wallets' install pages.
	login := get(t, d.URL+"/login")
	for _, link := range []string{"https://phantom.com/download", "https://solflare.com/download", "https://backpack.app/downloads"} {
		if !strings.Contains(login, `href="`+link+`"`) {
			t.Errorf("the sign-in page lacks a link to %s", link)
		}
	}
	docs := get(t, d.URL+"/docs")
	for _, want := range []string{`id="tag-creators"`, `id="fees"`, "the platform keeps 1% of what it cost"} {
		if !strings.Contains(docs, want) {
			t.Errorf("/docs lacks %q", want)
		}
	}
}
