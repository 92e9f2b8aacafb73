package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The catalog in the browser: sorts named for people that apply at once,
// tag links (in the list and on cards) that keep the search, the active
// tag marked, and a way out of a search that matches nothing.
func TestCatalogFilters(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	greeter(t, d)
	var where, label, current string
	run(t, ctx, "search", chromedp.Navigate(d.URL+"/?q=Greets"), chromedp.WaitVisible(".card"),
		chromedp.Click(`nav.tags a[href*="tag=writing"]`, chromedp.ByQuery), chromedp.WaitVisible(`nav.tags a.active`, chromedp.ByQuery),
		chromedp.Location(&where), chromedp.Text(`nav.tags a.active`, &current, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("select[name=sort] option[value=price_asc]").textContent`, &label))
	if !strings.Contains(where, "q=Greets") || !strings.Contains(where, "tag=writing") || current != "writing" {
		t.Errorf("a tag chosen after a search: at %s, active tag %q", where, current)
	}
	if label != "Cheapest first" {
		t.Errorf("the sort price_asc reads %q", label)
	}
	run(t, ctx, "sort", chromedp.Evaluate(`setTimeout(() => { const s = document.querySelector("select[name=sort]"); s.value = "price_asc"; s.dispatchEvent(new Event("change")) })`, nil),
		chromedp.Sleep(time.Second), chromedp.WaitVisible(".card"), chromedp.Location(&where))
	if !strings.Contains(where, "sort=price_asc") || !strings.Contains(where, "tag=writing") || !strings.Contains(where, "q=Greets") {
		t.Errorf("a new sort lost the search or the tag: %s", where)
	}
	var href string
	run(t, ctx, "card tag", chromedp.AttributeValue(`.card a.tag`, "href", &href, nil, chromedp.ByQuery))
	if !strings.Contains(href, "tag=writing") || !strings.Contains(href, "q=Greets") {
		t.Errorf("a card's tag links to %q", href)
	}
	run(t, ctx, "nothing", chromedp.Navigate(d.URL+"/?q=zzzz&tag=writing"), chromedp.WaitVisible(".empty"))
	if got := text(t, ctx, ".empty"); !strings.Contains(got, "No agent matches “zzzz” in writing") {
		t.Errorf("the empty catalog says %q", got)
	}
	run(t, ctx, "clear", chromedp.Click(`.empty a`, chromedp.ByQuery), chromedp.WaitVisible(".card"))
}
