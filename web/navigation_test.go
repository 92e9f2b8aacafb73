package web_test

import (
	"context"
	"crypto/ed25519"
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

var (
	siteNav = regexp.MustCompile(`(?s)<nav class="site" aria-label="Site">(.*?)</nav>`)
	navLink = regexp.MustCompile(`<a href="[^"]*"( aria-current="page")?>([^<]*)</a>`)
)

// One navigation: every page, the marketplace's, the explorer's, the API
// reference and each dashboard, has the site's header with the same links
// for the same visitor, and marks the section it belongs to, and only that
// one, as the current page.
func TestOneNavigation(t *testing.T) {
	d := market(t)
	id := greeter(t, d)
	ck, _, signed := signedIn(t, d)
	fund, err := client.New(d.URL, adminToken).Deposit(context.Background(), crtx.Mainnet, crtx.Address(ck.Public().(ed25519.PublicKey)), crtx.MicroPerUSDC)
	if err != nil {
		t.Fatal(err)
	}
	visitor := &browserLike{t: t, base: d.URL, cookies: map[string]string{}}
	operator := &browserLike{t: t, base: d.URL, cookies: map[string]string{}}
	operator.send("POST", "/dashboard/operator/login", url.Values{"token": {adminToken}})

	everyone := []string{"Agents", "Explorer", "API"}
	forVisitor := append(slices.Clone(everyone), "Sign in")
	forWallet := append(slices.Clone(everyone), "Dashboard", "Keys", "Creator")
	forOperator := append(slices.Clone(everyone), "Operator")
	tx := "/explorer/tx/" + fund.TransactionID + "?cluster=mainnet"
	for _, c := range []struct {
		who     *browserLike
		path    string
		links   []string
		current string
	}{
		{visitor, "/", forVisitor, "Agents"},
		{visitor, "/agents/" + id, forVisitor, "Agents"},
		{visitor, "/explorer/", forVisitor, "Explorer"},
		{visitor, tx, forVisitor, "Explorer"},
		{visitor, "/reserves", forVisitor, "Explorer"},
		{visitor, "/docs", forVisitor, "API"},
		{visitor, "/login", forVisitor, "Sign in"},
		{visitor, "/agents/no-such-agent", forVisitor, ""},
		{signed, "/", forWallet, "Agents"},
		{signed, "/agents/" + id, forWallet, "Agents"},
		{signed, tx, forWallet, "Explorer"},
		{signed, "/docs", forWallet, "API"},
		{signed, "/dashboard/", forWallet, "Dashboard"},
		{signed, "/dashboard/keys", forWallet, "Keys"},
		{signed, "/dashboard/creator", forWallet, "Creator"},
		{operator, "/dashboard/operator", forOperator, "Operator"},
		{operator, "/", forOperator, "Agents"},
		{operator, tx, forOperator, "Explorer"},
		{operator, "/docs", forOperator, "API"},
		{operator, "/agents/no-such-agent", forOperator, ""},
		{visitor, "/dashboard/operator", forVisitor, ""},
	} {
		resp, body := c.who.send("GET", c.path, nil)
		nav := siteNav.FindStringSubmatch(body)
		if nav == nil {
			t.Errorf("%s (%d): no site navigation", c.path, resp.StatusCode)
			continue
		}
		var links, current []string
		for _, m := range navLink.FindAllStringSubmatch(nav[1], -1) {
			links = append(links, m[2])
			if m[1] != "" {
				current = append(current, m[2])
			}
		}
		var want []string
		if c.current != "" {
			want = []string{c.current}
		}
		if !slices.Equal(links, c.links) || !slices.Equal(current, want) {
			t.Errorf("%s (%d): links %q with %q current; want %q with %q current", c.path, resp.StatusCode, links, current, c.links, want)
		}
	}
}
