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
