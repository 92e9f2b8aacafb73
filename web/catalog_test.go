package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// The catalog in the browser: sorts named for people that apply at once,
// tag links (in the list and on cards) that keep the search, the active
// tag marked, and a way out of a search that matches nothing.
func TestCatalogFilters(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	greeter(t, d)
	var where, label, current string
	run(t, ctx, "search", chromedp.Navigate(d.URL+"/?q=Greets"), appears(".card"),
		chromedp.Click(`nav.tags a[href*="tag=writing"]`, chromedp.ByQuery), appears(`nav.tags a.active`),
		chromedp.Location(&where), chromedp.Text(`nav.tags a.active`, &current, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("select[name=sort] option[value=price_asc]").textContent`, &label))
	if !strings.Contains(where, "q=Greets") || !strings.Contains(where, "tag=writing") || current != "writing 1" {
		t.Errorf("a tag chosen after a search: at %s, active tag %q", where, current)
	}
	if label != "Cheapest first" {
		t.Errorf("the sort price_asc reads %q", label)
	}
	run(t, ctx, "sort", chromedp.Evaluate(`setTimeout(() => { const s = document.querySelector("select[name=sort]"); s.value = "price_asc"; s.dispatchEvent(new Event("change")) })`, nil),
		chromedp.Sleep(time.Second), appears(".card"), chromedp.Location(&where))
	if !strings.Contains(where, "sort=price_asc") || !strings.Contains(where, "tag=writing") || !strings.Contains(where, "q=Greets") {
		t.Errorf("a new sort lost the search or the tag: %s", where)
	}
	var href string
	run(t, ctx, "card tag", chromedp.AttributeValue(`.card a.tag`, "href", &href, nil, chromedp.ByQuery))
	if !strings.Contains(href, "tag=writing") || !strings.Contains(href, "q=Greets") {
		t.Errorf("a card's tag links to %q", href)
	}
	run(t, ctx, "nothing", chromedp.Navigate(d.URL+"/?q=zzzz&tag=writing"), appears(".empty"))
	if got := text(t, ctx, ".empty"); !strings.Contains(got, "No agent matches “zzzz” in writing") {
		t.Errorf("the empty catalog says %q", got)
	}
	run(t, ctx, "clear", chromedp.Click(`.empty a`, chromedp.ByQuery), appears(".card"))
	// Each order is offered once: without a search the first one is the
	// most used; with one, the best match, then the most used.
	for q, want := range map[string]string{"/": "Most used|Most reliable", "/?q=Greets": "Best match|Most used|Most reliable"} {
		var labels string
		run(t, ctx, "sorts of "+q, chromedp.Navigate(d.URL+q), appears(".card"),
			chromedp.Evaluate(`[...document.querySelectorAll("select[name=sort] option")].map(o => o.textContent).join("|")`, &labels))
		if !strings.HasPrefix(labels, want+"|") || strings.Count(labels, "Most used") != 1 {
			t.Errorf("the sorts at %s: %s", q, labels)
		}
	}
}

// The home page says what crtx is and how it works, lists only the tags
// that have agents, with how many, and shows devnet's figures, labelled,
// for an agent that has run only there rather than "new".
func TestHomePage(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	id := greeter(t, d)
	bg := context.Background()
	if _, err := client.New(d.URL, devnetKey(t, d.URL)).Execute(bg, id, crtx.ExecuteParams{Task: "Ada"}, client.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Market.Ledger.RollupAll(bg); err != nil { // the statistics count the run
		t.Fatal(err)
	}
	run(t, ctx, "home", chromedp.Navigate(d.URL+"/"), appears(".card"))
	if got := text(t, ctx, ".intro"); !strings.Contains(got, "pay per call") || !strings.Contains(got, "refunded if it fails") {
		t.Errorf("the home page's introduction: %q", got)
	}
	if got := text(t, ctx, "nav.tags"); got != "writing 1" {
		t.Errorf("the tags with agents: %q", got)
	}
	if got := text(t, ctx, ".card"); !strings.Contains(got, "new on mainnet; on devnet: 100% success") || !strings.Contains(got, "1 run") {
		t.Errorf("a card of an agent run only on devnet: %q", got)
	}
	// Under the devnet filter the card's figures are devnet's, named so;
	// a run under a millisecond is not said to take none.
	run(t, ctx, "devnet", chromedp.Navigate(d.URL+"/?environment=devnet"), appears(".card"))
	if got := text(t, ctx, ".card"); !strings.Contains(got, "on devnet: 100% success") || strings.Contains(got, "mainnet") || strings.Contains(got, " 0 ms") {
		t.Errorf("a card under the devnet filter: %q", got)
	}
	run(t, ctx, "back", chromedp.Navigate(d.URL+"/"), appears(".card"))
	if got := text(t, ctx, "form.filters"); !strings.Contains(got, "Network") || strings.Contains(got, "Statistics from") {
		t.Errorf("the catalog's filters: %q", got)
	}
	// The agent's page shows its runs over time, devnet's while mainnet
	// has none, with a table of the same.
	run(t, ctx, "runs", chromedp.Navigate(d.URL+"/agents/"+id), appears("#runs-h"))
	if got := text(t, ctx, `section[aria-labelledby="runs-h"]`); !strings.Contains(got, "Devnet runs, last 30 days") || !strings.Contains(got, "1 run, 100% completed") {
		t.Errorf("the agent's runs over time: %q", got)
	}
	if got := text(t, ctx, ".grid2"); !strings.Contains(got, "1 run\n") && !strings.Contains(got, "1 run100%") || !strings.Contains(got, "0 disputes (0% of runs)") {
		t.Errorf("the agent's figures: %q", got)
	}
	if n := count(t, ctx, "svg.runs rect.ok"); n != 1 {
		t.Errorf("the runs chart has %d bars of completed runs, want today's", n)
	}
	run(t, ctx, "filtered", chromedp.Navigate(d.URL+"/?q=Greets"), appears(".card"))
	if n := count(t, ctx, ".intro"); n != 0 {
		t.Error("a search still shows the introduction")
	}
	run(t, ctx, "clear", chromedp.Click(`form.filters a.button`, chromedp.ByQuery), appears(".intro"))
}
