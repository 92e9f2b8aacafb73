package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// On a phone 390 px wide an agent's page reads whole: parameter names
// unbroken (the table scrolls instead), chart labels a size one can read,
// code lines that scroll rather than wrap mid-address, a payer choice
// whose words fit its box, and no page wider than the screen.
func TestAgentPageOnAPhone(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	id, _ := translator(t, d.URL)
	key := devnetKey(t, d.URL)
	if _, err := client.New(d.URL, key).Execute(context.Background(), id, crtx.ExecuteParams{Task: "Ada",
		Parameters: json.RawMessage(`{"lang":"fr","n":3}`)}, client.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "390 px", emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), appears(`form[action="/dashboard/airdrop"]`))
	run(t, ctx, "agent page", chromedp.Navigate(d.URL+"/agents/"+id), appears("#params"), appears("svg.chart"), appears("#try select"))

	var broken []string
	run(t, ctx, "parameter names", chromedp.Evaluate(`[...document.querySelectorAll("#params td.mono")].filter(td => {
		const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length > 1 }).map(td => td.textContent)`, &broken))
	if len(broken) > 0 {
		t.Errorf("parameter names broken over lines at 390 px: %q", broken)
	}
	var smallest float64
	run(t, ctx, "chart labels", chromedp.Evaluate(`Math.min(...[...document.querySelectorAll("svg.chart text")].map(x => x.getBoundingClientRect().height))`, &smallest))
	if smallest < 9 {
		t.Errorf("the chart's smallest label is %.1f px high at 390 px", smallest)
	}
	var wraps string
	run(t, ctx, "code", chromedp.Evaluate(`getComputedStyle(document.querySelector(".codeblock pre")).whiteSpace`, &wraps))
	if wraps != "pre" {
		t.Errorf("code samples wrap (white-space %q): a line breaks mid-address", wraps)
	}
	var fits bool
	run(t, ctx, "payer", chromedp.Evaluate(`(() => { const s = document.querySelector("#try select[name=key_id]");
		const c = document.createElement("canvas").getContext("2d"); c.font = getComputedStyle(s).font;
		return [...s.options].every(o => c.measureText(o.text).width + 40 <= s.clientWidth) })()`, &fits))
	if !fits {
		t.Error("a choice of who pays is cut off at 390 px")
	}
	for _, p := range []string{"/agents/" + id, "/explorer/account/" + crtx.AccountAddress(crtx.AccountListing, id), "/docs", "/reserves"} {
		var width int
		run(t, ctx, "width of "+p, chromedp.Navigate(d.URL+p), chromedp.WaitReady("body"), chromedp.Evaluate(`document.documentElement.scrollWidth`, &width))
		if width > 390 {
			t.Errorf("%s is %d px wide at 390 px", p, width)
		}
	}
}

// /docs finds an operation by its words, keeping the side navigation in
// step, and its search bar stays in view as the page scrolls.
func TestDocsSearch(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	run(t, ctx, "docs", chromedp.Navigate(d.URL+"/docs"), appears("#docs-search"))
	var all, shown int
	var execute, disputes bool
	run(t, ctx, "search", chromedp.Evaluate(`document.querySelectorAll("section.op").length`, &all),
		chromedp.SendKeys("#docs-search", "dispute", chromedp.ByQuery), appears("#docs-found"),
		chromedp.Evaluate(`document.querySelectorAll("section.op:not([hidden])").length`, &shown),
		chromedp.Evaluate(`!document.getElementById("executeAgent").hidden`, &execute),
		chromedp.Evaluate(`!document.querySelector('.docs-side a[href="#listCreatorDisputes"]').parentElement.hidden`, &disputes))
	if shown == 0 || shown >= all || execute || !disputes {
		t.Errorf("searching \"dispute\" shows %d of %d operations (execute shown: %v, creator disputes in the navigation: %v)", shown, all, execute, disputes)
	}
	if got := text(t, ctx, "#docs-found"); got != fmt.Sprintf("%d of %d operations", shown, all) {
		t.Errorf("the search says %q", got)
	}
	var top float64
	run(t, ctx, "scrolled", chromedp.Evaluate(`window.scrollTo(0, document.body.scrollHeight / 2); document.querySelector(".docs-bar").getBoundingClientRect().top`, &top))
	if top < -1 || top > 1 {
		t.Errorf("the search bar is at %.0f px once the page scrolls, not in view at its top", top)
	}
}
