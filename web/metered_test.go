package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/csv"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
)

// A metered agent's pages: its price in three parts, and what each call
// charged of what it held, in the history, its CSV, the execution's page
// and the creator's receipts.
func TestMeteredPages(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	cc, session := newCreator(t, d.URL)
	_, key, _ := ed25519.GenerateKey(nil)
	pub := crtx.Address(key.Public().(ed25519.PublicKey))
	srv := httptest.NewServer(creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		return "Bonjour, " + r.Task, 20_000, nil
	}, creator.Options{Metered: true}))
	t.Cleanup(srv.Close)
	str := func(s string) *string { return &s }
	raw := json.RawMessage(`{"type":"object"}`)
	base, per1k, most, tags, endpoint := crtx.USDC(1_000), crtx.USDC(2_500), crtx.USDC(500_000), []string{"writing"}, srv.URL+"/execute"
	a, err := cc.WithAgentKey(key).CreateListing(context.Background(), crtx.ListingParams{Name: str("Metered greeter"), Tagline: str("Greets."),
		Description: str("Greets per token."), Tags: &tags, InputSchema: &raw, OutputSchema: &raw, PricingModel: str(crtx.PricingMetered),
		Price: &base, Per1k: &per1k, Cap: &most, EndpointURL: &endpoint, SigningPublicKey: &pub})
	if err != nil {
		t.Fatal(err)
	}

	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), appears(`form[action="/dashboard/airdrop"]`))
	run(t, ctx, "airdrop", chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("sent="), appears(".ok"))
	run(t, ctx, "the agent's page", chromedp.Navigate(d.URL+"/agents/"+a.AgentID), appears(`form[action$="/run"]`))
	if got := text(t, ctx, ".grid2"); !strings.Contains(got, "0.001 USDC a call + 0.0025 per 1,000 tokens, at most 0.5 USDC") {
		t.Errorf("the agent's price: %q", got)
	}
	if got := text(t, ctx, `form[action$="/run"] button`); got != "Run for at most 0.5 USDC" {
		t.Errorf("the run button: %q", got)
	}
	run(t, ctx, "run", chromedp.SetValue(`textarea[name=task]`, "Ada", chromedp.ByQuery),
		chromedp.Click(`form[action$="/run"] button`, chromedp.ByQuery), landed("run="), appears("#run [data-final]"))

	run(t, ctx, "dashboard", chromedp.Navigate(d.URL+"/dashboard/"), appears("#history"))
	if got := text(t, ctx, "#history ~ .scroll table"); !strings.Contains(got, "0.051 of 0.5 held") {
		t.Errorf("the history row of a metered call: %q", got)
	}
	var csvText string
	run(t, ctx, "csv", chromedp.Evaluate(`fetch("/dashboard/executions.csv?environment=devnet").then(r => r.text())`, &csvText,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil || len(rows) != 2 || strings.Join(rows[0][11:], ",") != "held_usdc,returned_usdc,tokens_used" ||
		rows[1][7] != "0.051" || strings.Join(rows[1][11:], ",") != "0.5,0.449,20000" {
		t.Errorf("the CSV of a metered call: %v\n%s", err, csvText)
	}
	var id string
	run(t, ctx, "the execution's link", chromedp.Evaluate(`document.querySelector("#history ~ .scroll a[href^='/dashboard/executions/']").getAttribute("href")`, &id))
	run(t, ctx, "the execution's page", chromedp.Navigate(d.URL+id), appears("#task"))
	var receipt string
	run(t, ctx, "the receipt's text", chromedp.Evaluate(`document.querySelector("main").innerText`, &receipt))
	for _, want := range []string{"0.001 USDC a call + 0.0025 per 1,000 tokens", "held", "0.5 USDC", "20000", "signed by the creator", "returned", "0.449 USDC", "0.051 USDC"} {
		if !strings.Contains(receipt, want) {
			t.Errorf("the execution's page lacks %q:\n%s", want, receipt)
		}
	}

	run(t, ctx, "the creator's receipts", network.SetCookie("crtx_session", session).WithURL(d.URL).WithPath("/"),
		chromedp.Navigate(d.URL+"/dashboard/creator?tab=receipts&environment=devnet"), appears("#receipts"))
	var got string
	run(t, ctx, "the receipts' text", chromedp.Evaluate(`document.querySelector("main").innerText`, &got))
	if !strings.Contains(got, "0.051 of 0.5 held") {
		t.Errorf("the creator's receipts: %q", got)
	}

	// The Test Execution tool, told the listing is metered, asks for the
	// usage signed: a service that signs none does not pass.
	endpoint, unsigned := service(t)
	tool := `form[action="/dashboard/creator/test"]`
	run(t, ctx, "the test tool", chromedp.Navigate(d.URL+"/dashboard/creator?tab=test"), appears(tool),
		chromedp.SetValue(tool+` input[name=endpoint_url]`, endpoint, chromedp.ByQuery),
		chromedp.SetValue(tool+` input[name=signing_public_key]`, unsigned, chromedp.ByQuery),
		chromedp.Click(tool+` input[name=pricing_model]`, chromedp.ByQuery),
		chromedp.Submit(tool+` button`, chromedp.ByQuery), landed("sent="), appears("#report li"))
	if got := text(t, ctx, "#report"); !strings.Contains(got, "✗ The signature verifies") || !strings.Contains(got, "usage_signature") {
		t.Errorf("the test of a service that signs no usage, for a metered listing: %q", got)
	}
}
