package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// Listing as steps: Next holds a step with a required field empty; the
// endpoint is tested from the form, its report shown inline (a service
// that does not answer says so, and its later checks are not run); the
// price shows the collateral it locks before anything is sent; the review
// lists the listing, which is then listed.
func TestListingWizard(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), landed("/dashboard/"))
	wallet := strings.TrimSpace(text(t, ctx, "main p.mono"))
	if _, err := client.New(d.URL, adminToken).Deposit(context.Background(), crtx.Mainnet, wallet, 60*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	visible := func() string {
		t.Helper()
		var step string
		run(t, ctx, "step", chromedp.Evaluate(`[...document.querySelectorAll("fieldset.step")].filter(f => !f.hidden).map(f => f.dataset.step).join(",")`, &step))
		return step
	}
	next := func(step string) chromedp.Action {
		return chromedp.Click(`fieldset.step[data-step="`+step+`"] button.next`, chromedp.ByQuery)
	}
	run(t, ctx, "new listing", chromedp.Navigate(d.URL+"/dashboard/creator?tab=new"), appears("ol.wizard-steps"))
	if s := visible(); s != "1" {
		t.Fatalf("the form opens at steps %q", s)
	}
	run(t, ctx, "next with no name", next("1"))
	if s := visible(); s != "1" {
		t.Errorf("Next with the name empty went on to step %s", s)
	}
	// A parameter from the rows: the schema is written, the Try-it previewed.
	row := `#param-rows tr.param:last-child `
	run(t, ctx, "a parameter", appears("#param-add"), chromedp.Click("#param-add", chromedp.ByQuery), appears(row+".p-name"),
		chromedp.SendKeys(row+".p-name", "lang", chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const s = document.querySelector("#param-rows tr.param:last-child .p-type"); s.value = "choice"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, nil),
		chromedp.SendKeys(row+".p-choices", "en, fr", chromedp.ByQuery), chromedp.Click(row+".p-req", chromedp.ByQuery),
		chromedp.SendKeys(row+".p-desc", "the language", chromedp.ByQuery))
	var schema string
	run(t, ctx, "schema", chromedp.Value("#f-input_schema", &schema, chromedp.ByQuery))
	var sch struct {
		Properties map[string]struct {
			Type        string
			Enum        []string
			Description string
		}
		Required             []string
		AdditionalProperties bool
	}
	if err := json.Unmarshal([]byte(schema), &sch); err != nil || sch.Properties["lang"].Type != "string" || strings.Join(sch.Properties["lang"].Enum, ",") != "en,fr" ||
		len(sch.Required) != 1 || sch.Required[0] != "lang" || sch.Properties["lang"].Description != "the language" {
		t.Errorf("the schema written from the rows: %v\n%s", err, schema)
	}
	if got := text(t, ctx, "#param-preview"); !strings.Contains(got, "lang (required)") || !strings.Contains(got, "en") || !strings.Contains(got, "fr") {
		t.Errorf("the Try-it preview: %q", got)
	}
	endpoint, pub := service(t)
	run(t, ctx, "details", chromedp.SetValue("#f-name", "Greeter", chromedp.ByQuery), chromedp.SetValue("#f-tagline", "Greets.", chromedp.ByQuery),
		chromedp.SetValue("#f-description", "Greets in French.", chromedp.ByQuery), chromedp.SetValue("#f-tags", "writing", chromedp.ByQuery),
		next("1"), appears("#f-endpoint_url"))

	// A service that does not answer: said, and the rest not checked.
	run(t, ctx, "test a dead endpoint", chromedp.SetValue("#f-endpoint_url", "http://127.0.0.1:1/execute", chromedp.ByQuery),
		chromedp.SetValue("#f-signing_public_key", pub, chromedp.ByQuery), chromedp.Click("#wizard-test", chromedp.ByQuery),
		appears("#wizard-report li"))
	if got := text(t, ctx, "#wizard-report"); !strings.Contains(got, "✗ Not reachable") || !strings.Contains(got, "not checked, there was no answer") ||
		!strings.Contains(got, "the connection was refused") || !strings.Contains(got, "POST /execute HTTP/1.1") ||
		!strings.Contains(got, "X-Crtx-Signing-Key: "+pub) || !strings.Contains(got, "Nothing: no answer came back") {
		t.Errorf("the inline test of a dead endpoint, with what was sent: %q", got)
	}
	// A service that answers an error page: the answer as received, open.
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream model overloaded", http.StatusBadGateway)
	}))
	defer broken.Close()
	run(t, ctx, "test a broken endpoint", chromedp.SetValue("#f-endpoint_url", broken.URL+"/execute", chromedp.ByQuery),
		chromedp.Click("#wizard-test", chromedp.ByQuery), appears("#wizard-report details.exchange[open] pre"))
	if got := text(t, ctx, "#wizard-report details.exchange"); !strings.Contains(got, "HTTP/1.1 502 Bad Gateway") ||
		!strings.Contains(got, "upstream model overloaded") {
		t.Errorf("the inline test of an endpoint answering 502: %q", got)
	}
	// The report leads with what failed; and listing waits for a test
	// that passes.
	if got := text(t, ctx, "#wizard-report"); !strings.HasPrefix(strings.TrimSpace(got), "✗ Failed:") || !strings.Contains(got, "502") ||
		strings.Index(got, "502") > strings.Index(got, "Reachable") {
		t.Errorf("the report of an endpoint answering 502 does not lead with it: %q", got)
	}
	screenshot(t, ctx, "listing-test-failed")
	var disabled bool
	run(t, ctx, "review before a passing test", chromedp.Click(`ol.wizard-steps li[data-step="4"] a`, chromedp.ByQuery), appears("#list-gate"),
		chromedp.Evaluate(`document.querySelector("form[data-wizard] button[type=submit]").disabled`, &disabled))
	if got := text(t, ctx, "#list-gate"); !disabled || !strings.Contains(got, "Test the endpoint") || !strings.Contains(got, "Paste the agent's key file") {
		t.Errorf("listing is offered before a passing test (disabled %v): %q", disabled, got)
	}
	run(t, ctx, "back to the endpoint", chromedp.Click(`ol.wizard-steps li[data-step="2"] a`, chromedp.ByQuery), appears("#wizard-test"))
	run(t, ctx, "test the endpoint", chromedp.SetValue("#f-endpoint_url", endpoint, chromedp.ByQuery), chromedp.Click("#wizard-test", chromedp.ByQuery),
		appears("#wizard-report li.pass"))
	if got := text(t, ctx, "#wizard-report"); !strings.HasPrefix(strings.TrimSpace(got), "✓ Passed") || !strings.Contains(got, "✓ Reachable") || !strings.Contains(got, "✓ The signature verifies") {
		t.Errorf("the inline test of the service: %q", got)
	}
	// A key made here fills the public key and the key file, and can be
	// downloaded; this test's service has a key of its own, set after.
	var made, file, href string
	run(t, ctx, "keygen", chromedp.Click("#keygen", chromedp.ByQuery), appears("#keygen-download"),
		chromedp.Value("#f-signing_public_key", &made, chromedp.ByQuery), chromedp.Value("#f-key_signature", &file, chromedp.ByQuery),
		chromedp.AttributeValue("#keygen-download", "href", &href, nil, chromedp.ByQuery))
	if _, err := crtx.ParseAddress("key", made); err != nil || !strings.HasPrefix(file, "[") || !strings.HasPrefix(href, "blob:") {
		t.Errorf("a key made in the form: public %q, file %.20q, download %q", made, file, href)
	}
	run(t, ctx, "key file", chromedp.SetValue("#f-signing_public_key", pub, chromedp.ByQuery), chromedp.SetValue("#f-key_signature", keyFileOf(pub), chromedp.ByQuery),
		next("2"), appears("#f-price_per_call_usdc"),
		chromedp.SendKeys("#f-price_per_call_usdc", "0.5", chromedp.ByQuery))
	if got := text(t, ctx, "#collateral-out"); !strings.Contains(got, "locks 50 USDC of collateral, from your mainnet balance") {
		t.Errorf("the collateral for 0.5 USDC a call: %q", got)
	}
	run(t, ctx, "review", next("3"), appears("#review dt"))
	review := text(t, ctx, "#review")
	for _, want := range []string{"Greeter", "Greets in French.", endpoint, pub, "0.5", "locks 50 USDC"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review lacks %q:\n%s", want, review)
		}
	}
	screenshot(t, ctx, "listing-review")
	run(t, ctx, "list", chromedp.Click(`form[data-wizard] button[type=submit]`, chromedp.ByQuery), landed("sent="), appears(".ok"))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Listed Greeter") {
		t.Errorf("listing from the steps: %q", got)
	}
	page, err := client.New(d.URL, "").Agents(context.Background(), nil)
	if err != nil || len(page.Agents) != 1 {
		t.Fatalf("catalog: %+v, %v", page, err)
	}
	a, err := client.New(d.URL, "").Agent(context.Background(), page.Agents[0].AgentID, "")
	if err != nil || !strings.Contains(string(a.InputSchema), `"enum":["en","fr"]`) {
		t.Errorf("the listed agent's input schema: %s, %v", a.InputSchema, err)
	}

	// Priced per token: the two other prices show once chosen, the
	// collateral is the most's, and all three are signed and listed.
	_, mkey, _ := ed25519.GenerateKey(nil)
	mpub := crtx.Address(mkey.Public().(ed25519.PublicKey))
	agentKeys.Store(mpub, mkey)
	msvc := httptest.NewServer(creator.NewHandler(mkey, func(context.Context, creator.Request) (string, int, error) {
		return "Bonjour", 12, nil
	}, creator.Options{Metered: true}))
	defer msvc.Close()
	var hidden bool
	run(t, ctx, "new metered listing", chromedp.Navigate(d.URL+"/dashboard/creator?tab=new"), appears("#f-name"),
		chromedp.SetValue("#f-name", "Metered greeter", chromedp.ByQuery), chromedp.SetValue("#f-tagline", "Greets.", chromedp.ByQuery),
		chromedp.SetValue("#f-description", "Greets per token.", chromedp.ByQuery), chromedp.SetValue("#f-tags", "writing", chromedp.ByQuery),
		next("1"), appears("#f-endpoint_url"),
		chromedp.SetValue("#f-endpoint_url", msvc.URL+"/execute", chromedp.ByQuery), chromedp.SetValue("#f-signing_public_key", mpub, chromedp.ByQuery),
		chromedp.SetValue("#f-key_signature", keyFileOf(mpub), chromedp.ByQuery), next("2"), appears("#f-price_per_call_usdc"),
		chromedp.Evaluate(`document.querySelector("[data-metered-only]").hidden`, &hidden))
	if !hidden {
		t.Errorf("the metered prices show for a listing priced per call")
	}
	run(t, ctx, "metered prices", chromedp.SetValue("#f-pricing_model", "metered", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#f-pricing_model").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		appears("#f-price_per_1k_tokens_usdc"), chromedp.SendKeys("#f-price_per_call_usdc", "0.001", chromedp.ByQuery),
		chromedp.SendKeys("#f-price_per_1k_tokens_usdc", "0.002", chromedp.ByQuery), chromedp.SendKeys("#f-max_price_per_call_usdc", "0.1", chromedp.ByQuery))
	if got := text(t, ctx, "#collateral-out"); !strings.Contains(got, "At at most 0.1 USDC a call, listing locks 10 USDC") {
		t.Errorf("the collateral of a metered listing: %q", got)
	}
	// A pricing changed after the test is tested again: a metered
	// listing's test checks the usage signature too.
	run(t, ctx, "metered review", next("3"), appears("#review dt"), appears("#list-gate"))
	run(t, ctx, "test the metered endpoint", chromedp.Click(`ol.wizard-steps li[data-step="2"] a`, chromedp.ByQuery), appears("#wizard-test"),
		chromedp.Click("#wizard-test", chromedp.ByQuery), appears(`#wizard-report [data-passed="true"]`),
		chromedp.Click(`ol.wizard-steps li[data-step="4"] a`, chromedp.ByQuery), appears("#review dt"))
	if review := text(t, ctx, "#review"); !strings.Contains(review, "metered") || !strings.Contains(review, "0.002") {
		t.Errorf("the review of a metered listing:\n%s", review)
	}
	run(t, ctx, "list metered", chromedp.Click(`form[data-wizard] button[type=submit]`, chromedp.ByQuery), landed("sent="), appears(".ok"))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Listed Metered greeter") {
		t.Fatalf("listing a metered agent from the steps: %q", got)
	}
	if page, err := client.New(d.URL, "").Agents(context.Background(), nil); err != nil || !slices.ContainsFunc(page.Agents, func(a api.AgentSummary) bool {
		return a.Name == "Metered greeter" && a.Per1k != nil && *a.Per1k == 2_000 && a.Cap != nil && *a.Cap == 100_000
	}) {
		t.Errorf("the catalog after a metered listing: %+v, %v", page, err)
	}
	run(t, ctx, "the metered agent's page", chromedp.Navigate(d.URL+"/"), appears(".card"))
	if got := text(t, ctx, ".cards"); !strings.Contains(got, "0.001 USDC a call + 0.002 per 1,000 tokens, at most 0.1 USDC") {
		t.Errorf("the catalog's card of a metered agent: %q", got)
	}

	// The Key & test tab's report of a failed test, the exchange open,
	// passes axe in both schemes.
	if axe := axeAlongside(t); axe != nil {
		tool := `form[action="/dashboard/creator/test"]`
		var where string
		run(t, ctx, "the test tool", chromedp.Navigate(d.URL+"/dashboard/creator?tab=test"), appears(tool),
			chromedp.SetValue(tool+` input[name=endpoint_url]`, broken.URL+"/execute", chromedp.ByQuery),
			chromedp.SetValue(tool+` input[name=signing_public_key]`, pub, chromedp.ByQuery),
			chromedp.Submit(tool+` button`, chromedp.ByQuery), landed("sent="), appears("#report details.exchange[open] pre"),
			chromedp.Evaluate(`location.pathname + location.search`, &where))
		for _, scheme := range []string{"light", "dark"} {
			axeCheck(t, ctx, axe, d.URL, scheme, where)
			run(t, ctx, "the report checked", appears("#report details.exchange[open] pre"))
		}
	}
}
