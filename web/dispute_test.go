package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// A dispute in the pages: the caller reports a problem from the
// execution's page (reason in words, evidence as fields, a bad link said
// under its field); the creator reads it as a timeline and answers; the
// operator rules; the caller's page then shows the whole timeline and the
// refund in the receipt. Each page passes axe in both schemes.
func TestDisputeInThePages(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	axe := axeAlongside(t)
	agentID, creator := greeterOf(t, d)

	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), appears(`form[action="/dashboard/airdrop"]`),
		chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("sent="), appears(".ok"))
	caller := cookie(t, ctx, "crtx_session")
	run(t, ctx, "run", chromedp.Navigate(d.URL+"/agents/"+agentID), appears(`form[action$="/run"]`),
		chromedp.SetValue(`textarea[name=task]`, "Ada", chromedp.ByQuery), chromedp.Click(`form[action$="/run"] button`),
		landed("run="), appears("#run [data-final]"),
		chromedp.Click(`#run a[href^="/dashboard/executions/"]`, chromedp.ByQuery), landed("/dashboard/executions/"), appears("#dispute"))
	var execution string
	run(t, ctx, "address", chromedp.Evaluate(`location.pathname`, &execution))
	if got := text(t, ctx, "#dispute"); !strings.Contains(got, "Report a problem") || !strings.Contains(got, "you can dispute it until") {
		t.Errorf("a completed execution's page offers: %q", got)
	}
	if axe != nil {
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, d.URL, scheme, execution)
		}
	}

	report := `form[action$="/dispute"] `
	run(t, ctx, "a bad link", chromedp.Navigate(d.URL+execution), appears(report+"textarea[name=description]"),
		chromedp.SetValue(report+`select[name=reason]`, "fraud", chromedp.ByQuery),
		chromedp.SetValue(report+`textarea[name=description]`, "It greeted in English.", chromedp.ByQuery),
		chromedp.SetValue(report+`textarea[name=expected]`, "Bonjour, Ada.", chromedp.ByQuery),
		chromedp.SetValue(report+`input[name=link]`, "ftp://example.com/x", chromedp.ByQuery),
		chromedp.Click(report+"button", chromedp.ByQuery), landed("sent="), appears("#err-link"))
	if got := text(t, ctx, "#err-link"); !strings.Contains(got, "starting with https://") {
		t.Errorf("a bad evidence link: %q", got)
	}
	var kept string
	run(t, ctx, "kept", chromedp.Value(report+`textarea[name=description]`, &kept, chromedp.ByQuery))
	if kept != "It greeted in English." {
		t.Errorf("the refused form keeps %q", kept)
	}
	run(t, ctx, "reported", chromedp.SetValue(report+`input[name=link]`, "https://example.com/ada", chromedp.ByQuery),
		chromedp.Click(report+"button", chromedp.ByQuery), landed("sent="), appears("#dispute ol.timeline"))
	got := text(t, ctx, "#dispute")
	for _, want := range []string{"open", "The result is not what was asked", "It greeted in English.", "What was expected", "Bonjour, Ada.",
		"https://example.com/ada", "answer is due by", "operator's ruling"} {
		if !strings.Contains(got, want) {
			t.Errorf("the dispute's timeline for the caller lacks %q:\n%s", want, got)
		}
	}

	// The creator reads the same timeline and answers.
	run(t, ctx, "creator", network.SetCookie("crtx_session", creator).WithURL(d.URL).WithPath("/"),
		chromedp.Navigate(d.URL+"/dashboard/creator?tab=disputes"), appears(`form[action^="/dashboard/creator/disputes/"]`))
	if got := text(t, ctx, "#disputes + div"); !strings.Contains(got, "Bonjour, Ada.") || !strings.Contains(got, "The result is not what was asked") ||
		!strings.Contains(got, "At stake: the call's 0.05 USDC") {
		t.Errorf("the creator's dispute reads:\n%s", got)
	}
	id := strings.TrimPrefix(execution, "/dashboard/executions/")
	if n := count(t, ctx, `#disputes + div a[href="/explorer/search?q=`+id+`&cluster=devnet"]`); n != 1 {
		t.Error("the creator's dispute does not link the run")
	}
	run(t, ctx, "answer", chromedp.SetValue(`form[action^="/dashboard/creator/disputes/"] textarea[name=text]`, "It answers in the language asked.", chromedp.ByQuery),
		chromedp.Click(`form[action^="/dashboard/creator/disputes/"] button`, chromedp.ByQuery), landed("sent="), appears("#disputes + div ol.timeline"))
	if got := text(t, ctx, "#disputes + div"); !strings.Contains(got, "The creator answered") || !strings.Contains(got, "It answers in the language asked.") {
		t.Errorf("the answered dispute reads:\n%s", got)
	}
	// The console stays on the environment it was answered in.
	var where, env string
	run(t, ctx, "where", chromedp.Evaluate(`location.search`, &where), chromedp.Text(`nav.envs a[aria-current]`, &env, chromedp.ByQuery))
	if !strings.Contains(where, "environment=devnet") || !strings.Contains(where, "tab=disputes") || !strings.EqualFold(env, "devnet") {
		t.Errorf("after answering, the console is at %q showing %q", where, env)
	}

	// The operator upholds it, refunding 0.02 of the 0.05 USDC.
	form := `form[action^="/dashboard/operator/disputes/"]`
	run(t, ctx, "operator", chromedp.Navigate(d.URL+"/dashboard/operator"), appears(`input[name=token]`),
		chromedp.SetValue(`input[name=token]`, adminToken), chromedp.Submit(`input[name=token]`), appears(form))
	if got := text(t, ctx, "#main"); !strings.Contains(got, "Bonjour, Ada.") || !strings.Contains(got, "It answers in the language asked.") ||
		!strings.Contains(got, "At stake: the call's 0.05 USDC") {
		t.Errorf("the operator's dispute reads:\n%s", got)
	}
	// The decision is the operator's: nothing is chosen for them.
	var outcome string
	run(t, ctx, "no outcome chosen", chromedp.Value(form+` select[name=outcome]`, &outcome, chromedp.ByQuery))
	if outcome != "" {
		t.Errorf("the decision form preselects %q", outcome)
	}
	run(t, ctx, "upheld", chromedp.SetValue(form+` select[name=outcome]`, "upheld", chromedp.ByQuery), chromedp.SetValue(form+` input[name=slash_usdc]`, "0.02"), chromedp.SetValue(form+` input[name=refund_usdc]`, "0.02"),
		chromedp.Evaluate(`document.querySelector('`+form+` input[name=confirm]').checked = true`, nil),
		chromedp.Submit(form+" button"), appears(".ok"))

	// Back to the caller: the ruling, and the money it returned.
	run(t, ctx, "caller again", network.SetCookie("crtx_session", caller).WithURL(d.URL).WithPath("/"),
		chromedp.Navigate(d.URL+execution), appears("#dispute ol.timeline"))
	got = text(t, ctx, "#dispute")
	for _, want := range []string{"upheld", "It answers in the language asked.", "0.02 USDC slashed on the record", "0.02 USDC refunded to the caller"} {
		if !strings.Contains(got, want) {
			t.Errorf("the ruled dispute's timeline lacks %q:\n%s", want, got)
		}
	}
	if n := count(t, ctx, `form[action$="/dispute"]`); n != 0 {
		t.Error("a disputed execution offers to report a problem again")
	}
	var charged string
	run(t, ctx, "charged", chromedp.Evaluate(`[...document.querySelectorAll("main tr")].find(r => r.querySelector("th")?.textContent === "charged")?.querySelector("td")?.textContent`, &charged))
	if charged != "0.03 USDC" {
		t.Errorf("the receipt after a 0.02 USDC refund of a 0.05 USDC run charges %q", charged)
	}
	screenshot(t, ctx, "execution-disputed")
	// The caller's dashboard lists the disputes they opened, with what
	// was at stake and how each ended.
	run(t, ctx, "the caller's disputes", chromedp.Navigate(d.URL+"/dashboard/"), appears("#your-disputes"))
	if got := text(t, ctx, `section[aria-labelledby="your-disputes"]`); !strings.Contains(got, "The result is not what was asked") ||
		!strings.Contains(got, "0.05") || !strings.Contains(got, "0.02 USDC refunded") {
		t.Errorf("the caller's disputes:\n%s", got)
	}
	if axe != nil {
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, d.URL, scheme, execution, "/dashboard/creator?tab=disputes")
		}
	}
}
