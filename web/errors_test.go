package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// cookie reads one of the browser's cookies (HttpOnly ones included).
func cookie(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	var value string
	run(t, ctx, "cookies", chromedp.ActionFunc(func(ctx context.Context) error {
		cs, err := network.GetCookies().Do(ctx)
		for _, c := range cs {
			if c.Name == name {
				value = c.Value
			}
		}
		return err
	}))
	if value == "" {
		t.Fatalf("no cookie %s", name)
	}
	return value
}

// Errors reach people as pages in the site's layout that say what
// happened and where to go next, never as the API's JSON: an unknown
// agent or execution, a transaction looked for on the other cluster, a
// form that is stale, and forms sent after a session ended.
func TestErrorsArePages(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	page := func(what, path, heading, next string) {
		t.Helper()
		run(t, ctx, what, chromedp.Navigate(d.URL+path), appears("h1"))
		if h := text(t, ctx, "h1"); h != heading {
			t.Errorf("%s: heading %q, want %q", what, h, heading)
		}
		var nav int
		run(t, ctx, what+" links", chromedp.Evaluate(`document.querySelectorAll('header nav.site a[href="/explorer/"]').length`, &nav))
		if nav != 1 || (next != "" && !strings.Contains(text(t, ctx, "#main"), next)) {
			t.Errorf("%s: no site header, or no %q to go on", what, next)
		}
	}
	page("unknown agent", "/agents/agt_nothing", "No such agent", "Browse the agents")
	page("wrong address", "/nowhere", "No page here", "Browse the agents")
	var lang, title string
	run(t, ctx, "its language and title", chromedp.Evaluate(`document.documentElement.lang`, &lang), chromedp.Evaluate(`document.title`, &title))
	if lang != "en" || title != "No page here — crtx" {
		t.Errorf("the wrong address's page: lang %q, title %q", lang, title)
	}

	fund, err := client.New(d.URL, adminToken).Deposit(context.Background(), crtx.Mainnet, "11111111111111111111111111111111", crtx.MicroPerUSDC)
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "a transaction", chromedp.Navigate(d.URL+"/explorer/tx/"+fund.TransactionID), appears("nav.cluster"),
		chromedp.Click(`nav.cluster a[href="?cluster=devnet"]`), appears("ul.next"))
	if h := text(t, ctx, "h1"); h != "No such transaction" {
		t.Errorf("the transaction on the other cluster: %q", h)
	}
	run(t, ctx, "back to mainnet", chromedp.Click(`ul.next a`), appears(`nav.cluster`))
	if got := text(t, ctx, "#main"); !strings.Contains(got, fund.TransactionID) {
		t.Error("Look on mainnet does not lead to the transaction")
	}

	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet"), appears(`form[action="/dashboard/airdrop"]`))
	page("unknown execution", "/dashboard/executions/exe_nothing", "No such execution", "Your executions")
	page("wrong dashboard address", "/dashboard/nowhere", "No page here", "Go to your dashboard")

	// A form whose token is not this session's is refused on a page.
	run(t, ctx, "stale form", chromedp.Navigate(d.URL+"/dashboard/"), appears(`form[action="/dashboard/airdrop"]`),
		chromedp.SetValue(`form[action="/dashboard/airdrop"] input[name=csrf]`, "1.stale.0"),
		chromedp.Submit(`form[action="/dashboard/airdrop"] button`), appears("ul.next"))
	if h := text(t, ctx, "h1"); h != "This form was not sent" {
		t.Errorf("stale form: %q", h)
	}

	// A form sent after the session ended leads to sign-in, which says so
	// and comes back to the page after.
	run(t, ctx, "dashboard", chromedp.Navigate(d.URL+"/dashboard/"), appears(`form[action="/dashboard/airdrop"]`))
	if err := d.Market.Accounts.SignOut(context.Background(), cookie(t, ctx, "crtx_session")); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "airdrop after the end", chromedp.Submit(`form[action="/dashboard/airdrop"] button`), appears(".error"))
	if got := text(t, ctx, ".error"); !strings.Contains(got, "session has ended") {
		t.Errorf("after the session ended: %q", got)
	}
	run(t, ctx, "sign in again", chromedp.Click("#generate-wallet"), appears(`form[action="/dashboard/airdrop"]`))

	// Likewise the operator's.
	run(t, ctx, "operator", chromedp.Navigate(d.URL+"/dashboard/operator"), appears(`input[name=token]`),
		chromedp.SetValue(`input[name=token]`, adminToken), chromedp.Submit(`input[name=token]`),
		appears(`form[action="/dashboard/operator/creators"]`))
	if err := d.Market.Accounts.SignOut(context.Background(), cookie(t, ctx, "crtx_admin")); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "badge after the end", chromedp.Submit(`form[action="/dashboard/operator/creators"] button`), appears(".error"))
	if got := text(t, ctx, ".error"); !strings.Contains(got, "operator session has ended") {
		t.Errorf("operator after the session ended: %q", got)
	}
}
