package web_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// A caller's usage over time: first steps for an empty account, spending
// per day by agent (a refunded run costing nothing), history rows named by
// agent with their task, relative times, pages and a CSV export; an
// execution's page shows what was asked and offers to run it again and to
// download its signed receipt, which verifies offline.
func TestUsageOverTime(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	axe := axeAlongside(t)
	bg := context.Background()
	greeterID := greeter(t, d)
	translatorID, _ := translator(t, d.URL)

	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), appears("#start-h"))
	if got := text(t, ctx, "ol.checklist"); !strings.Contains(got, "Get devnet test money") || strings.Contains(got, "✓") {
		t.Errorf("an empty account's first steps: %q", got)
	}
	run(t, ctx, "airdrop", chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("sent="), appears(".ok"))
	if got := text(t, ctx, "ol.checklist li.done"); !strings.Contains(got, "✓ Get devnet test money") {
		t.Errorf("the first step, done: %q", got)
	}

	try := func(agent, task, lang string) {
		t.Helper()
		actions := []chromedp.Action{chromedp.Navigate(d.URL + "/agents/" + agent), appears(`form[action$="/run"]`),
			chromedp.SetValue(`textarea[name=task]`, task, chromedp.ByQuery)}
		if lang != "" {
			actions = append(actions, chromedp.SetValue(`select[name="param.lang"]`, lang, chromedp.ByQuery), chromedp.SetValue(`input[name="param.n"]`, "2", chromedp.ByQuery))
		}
		actions = append(actions, chromedp.Click(`form[action$="/run"] button`, chromedp.ByQuery), landed("run="), appears("#run [data-final]"))
		run(t, ctx, "run "+task, actions...)
	}
	try(greeterID, "Ada", "")
	try(translatorID, "Bonjour tout le monde", "en")
	try(translatorID, "fail", "en")

	run(t, ctx, "dashboard", chromedp.Navigate(d.URL+"/dashboard/"), appears("svg.spend"))
	screenshot(t, ctx, "dashboard-usage")
	if n := count(t, ctx, "#start-h"); n != 0 {
		t.Error("an account with runs still shows its first steps")
	}
	if got := text(t, ctx, "#spending + p"); !strings.Contains(got, "0.06 USDC on 3 calls") {
		t.Errorf("the spending's total: %q", got)
	}
	legend := text(t, ctx, "ul.legend")
	for _, want := range []string{"Greeter: 0.05 USDC, 1 call", "Translator: 0.01 USDC, 2 calls"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the spending's legend lacks %q: %q", want, legend)
		}
	}
	if n := count(t, ctx, "svg.spend rect"); n != 2 {
		t.Errorf("today's bar has %d segments, want one for each agent", n)
	}
	history := text(t, ctx, "#history ~ .scroll table")
	for _, want := range []string{"Greeter", "Ada", "→ Bonjour, Ada ✓", "Translator", "Bonjour tout le monde", "0 (0.01 refunded)", "just now"} {
		if !strings.Contains(history, want) {
			t.Errorf("the history lacks %q:\n%s", want, history)
		}
	}
	var csvText string
	run(t, ctx, "csv", chromedp.Evaluate(`fetch("/dashboard/executions.csv?environment=devnet").then(r => r.text())`, &csvText,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "execution_id" || rows[0][7] != "charged_usdc" {
		t.Fatalf("the CSV export: %v\n%s", err, csvText)
	}
	for _, r := range rows[1:] {
		if r[4] == "failed" && (r[6] != "0.01" || r[7] != "0") {
			t.Errorf("the failed run in the CSV: %v", r)
		}
	}
	if axe != nil {
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, d.URL, scheme, "/dashboard/")
		}
	}

	// An execution's page: what was asked, run again, the signed receipt.
	run(t, ctx, "execution", chromedp.Navigate(d.URL+"/dashboard/"), appears("#history ~ .scroll table"),
		chromedp.Click(`#history ~ .scroll tr:nth-child(3) a[href^="/dashboard/executions/"]`, chromedp.ByQuery), landed("/dashboard/executions/"),
		appears("#task"))
	if task, params := text(t, ctx, "#task"), text(t, ctx, "#parameters"); task != "Bonjour tout le monde" || !strings.Contains(params, `"lang": "en"`) {
		t.Errorf("the execution's request: %q, %q", task, params)
	}
	var raw string
	run(t, ctx, "receipt", chromedp.Evaluate(`fetch(document.querySelector('a[href$="/receipt.json"]').href).then(r => r.text())`, &raw,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	wk, err := client.New(d.URL, "").WellKnown(bg)
	if err != nil {
		t.Fatal(err)
	}
	marketKey, _ := crtx.ParseAddress("key", wk.SigningPublicKey)
	if rc, err := client.VerifyReceipt([]byte(raw), marketKey); err != nil || rc.AgentID != translatorID || rc.Cost != 10_000 {
		t.Errorf("the downloaded receipt: %+v, %v\n%s", rc, err, raw)
	}
	run(t, ctx, "run again", chromedp.Click(`a[href*="?from="]`, chromedp.ByQuery), landed("from="), appears(`form[action$="/run"]`))
	var task, lang string
	run(t, ctx, "prefilled", chromedp.Value(`textarea[name=task]`, &task, chromedp.ByQuery), chromedp.Value(`select[name="param.lang"]`, &lang, chromedp.ByQuery))
	if task != "Bonjour tout le monde" || lang != "en" {
		t.Errorf("Run again fills the form with %q, lang %q", task, lang)
	}

	// Pages of 25, newest first.
	cc := client.New(d.URL, cookie(t, ctx, "crtx_session"))
	key, err := cc.CreateKey(bg, client.KeyParams{Name: "many", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	for range 25 {
		if _, err := client.New(d.URL, key.Key).Execute(bg, greeterID, crtx.ExecuteParams{Task: "again"}, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, "older", chromedp.Navigate(d.URL+"/dashboard/"), appears("#history ~ .scroll table"),
		chromedp.Click(`a[href*="offset=25"]`, chromedp.ByQuery), landed("offset=25"), appears("#history ~ .scroll table"))
	if got := text(t, ctx, "#history ~ p.muted"); !strings.Contains(got, "26–28 of 28 executions") || !strings.Contains(got, "Newer") {
		t.Errorf("the second page says %q", got)
	}
}
