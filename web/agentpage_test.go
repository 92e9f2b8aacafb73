package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

const translatorSchema = `{"type":"object","properties":{
	"lang":{"type":"string","enum":["fr","en"],"description":"the language to answer in"},
	"n":{"type":"integer","examples":[3]},
	"formal":{"type":"boolean","default":false}},"required":["lang","n"]}`

// translator lists an agent with required parameters whose service
// answers with the parameters it got; it returns the agent's id and the
// creator's client.
func translator(t *testing.T, url string) (string, *client.Client) {
	t.Helper()
	ctx := context.Background()
	_, ck, _ := ed25519.GenerateKey(nil)
	client.New(url, adminToken).Deposit(ctx, crtx.Mainnet, crtx.Address(ck.Public().(ed25519.PublicKey)), 100*crtx.MicroPerUSDC)
	cc, _, err := client.New(url, "").SignIn(ctx, ck)
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Task == "fail" {
			return "", 0, errors.New("cannot translate that")
		}
		return `{"task":` + string(must(json.Marshal(r.Task))) + `,"parameters":` + string(r.Parameters) + `}`, 0, nil
	}, creator.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	str := func(s string) *string { return &s }
	endpoint, pub, price, tags := srv.URL+"/execute", h.PublicKey(), crtx.USDC(10_000), []string{"writing"}
	a, err := cc.WithAgentKey(key).CreateListing(ctx, crtx.ListingParams{Name: str("Translator"), Tagline: str("Translates."), Description: str("Translates."),
		Tags: &tags, InputSchema: rawJSON(translatorSchema), OutputSchema: rawJSON(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub})
	if err != nil {
		t.Fatal(err)
	}
	return a.AgentID, cc
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// An agent's page sells it: its parameters in a table, "new" rather than
// statistics of no run, snippets that run as pasted (the curl one is run
// here, through a shell), a form that runs it for a signed-in caller and
// lands on the verified result, and no way to run it while it is paused.
func TestAgentPageAsProduct(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	id, cc := translator(t, d.URL)

	run(t, ctx, "agent page", chromedp.Navigate(d.URL+"/agents/"+id), chromedp.WaitVisible("#params"))
	params := text(t, ctx, "#params")
	for _, want := range []string{"lang", "string: fr, en", "required", "the language to answer in", "formal", "false"} {
		if !strings.Contains(params, want) {
			t.Errorf("the parameters table lacks %q:\n%s", want, params)
		}
	}
	if stats := text(t, ctx, ".grid2"); !strings.Contains(stats, "new") || strings.Contains(stats, "0% success") {
		t.Errorf("an agent without runs shows %q", stats)
	}
	if !strings.Contains(text(t, ctx, "#try"), "Try it") || !strings.Contains(text(t, ctx, "#main"), "Sign in and make an API key") {
		t.Error("a visitor is not told how to try the agent")
	}
	curl := text(t, ctx, "#curl")
	if cli := text(t, ctx, "#cli"); !strings.Contains(cli, "--param 'lang=fr' --param 'n=3'") {
		t.Errorf("the CLI snippet does not fill the required parameters: %s", cli)
	}

	// The curl snippet, pasted into a shell with a key, runs the agent.
	_, wk, _ := ed25519.GenerateKey(nil)
	caller, _, err := client.New(d.URL, "").SignIn(context.Background(), wk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := caller.Airdrop(context.Background(), crtx.Address(wk.Public().(ed25519.PublicKey)), crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	created, err := caller.CreateKey(context.Background(), client.KeyParams{Name: "shell", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", curl)
	sh.Env = append(os.Environ(), "CRTX_API_KEY="+created.Key)
	out, err := sh.CombinedOutput()
	var rec struct{ Status, Result string }
	if err != nil || json.Unmarshal(out, &rec) != nil || rec.Status != "completed" || !strings.Contains(rec.Result, `"n":3`) {
		t.Errorf("the curl snippet as pasted: %v\n%s", err, out)
	}

	// A signed-in caller with a key runs it from the page.
	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), chromedp.WaitVisible("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), chromedp.WaitVisible(`form[action="/dashboard/airdrop"]`),
		chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("sent="), chromedp.WaitVisible(".ok"),
		chromedp.Navigate(d.URL+"/dashboard/keys"), chromedp.WaitVisible(`input[name=name]`),
		chromedp.SetValue(`input[name=name]`, "web"), chromedp.Click(`form[action="/dashboard/keys"] button`), chromedp.WaitVisible("#new-key"))
	run(t, ctx, "try it", chromedp.Navigate(d.URL+"/agents/"+id), chromedp.WaitVisible(`form[action$="/run"]`),
		chromedp.SetValue(`textarea[name=task]`, "Bonjour", chromedp.ByQuery), chromedp.SetValue(`select[name="param.lang"]`, "en", chromedp.ByQuery),
		chromedp.SetValue(`input[name="param.n"]`, "two", chromedp.ByQuery), chromedp.Click(`form[action$="/run"] button`), chromedp.WaitVisible(".error"))
	var n string
	run(t, ctx, "kept", chromedp.Value(`input[name="param.n"]`, &n, chromedp.ByQuery))
	if e := text(t, ctx, ".error"); !strings.Contains(e, "n:") || n != "two" {
		t.Errorf("a bad parameter: %q, the field keeps %q", e, n)
	}
	run(t, ctx, "try again", chromedp.SetValue(`input[name="param.n"]`, "2", chromedp.ByQuery), chromedp.Click(`form[action$="/run"] button`),
		chromedp.WaitVisible("#verify"), chromedp.Click("#verify", chromedp.ByQuery), chromedp.WaitVisible("#verify-out.ok"))
	if got := text(t, ctx, "#result"); !strings.Contains(got, "\"lang\": \"en\"") || !strings.Contains(got, "\"n\": 2") {
		t.Errorf("the result of the page's run, pretty-printed: %q", got)
	}
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Ran Translator on devnet") {
		t.Errorf("the run's page says %q", got)
	}
	if got := text(t, ctx, "main"); !strings.Contains(got, "charged\t0.01 USDC") && !strings.Contains(got, "charged 0.01 USDC") {
		t.Errorf("the receipt of a completed run does not say it charged 0.01 USDC:\n%s", got)
	}
	// A failed run is told as one, with its money back, not as spent.
	run(t, ctx, "a failing run", chromedp.Navigate(d.URL+"/agents/"+id), chromedp.WaitVisible(`form[action$="/run"]`),
		chromedp.SetValue(`textarea[name=task]`, "fail", chromedp.ByQuery), chromedp.SetValue(`select[name="param.lang"]`, "en", chromedp.ByQuery),
		chromedp.SetValue(`input[name="param.n"]`, "1", chromedp.ByQuery),
		chromedp.Click(`form[action$="/run"] button`), landed("/dashboard/executions/"), chromedp.WaitVisible(".error"))
	if got := text(t, ctx, ".error"); !strings.Contains(got, "Failed — 0.01 USDC refunded") {
		t.Errorf("a failed run says %q", got)
	}
	receipt := text(t, ctx, "main")
	for _, want := range []string{"refunded", "0.01 USDC", "charged"} {
		if !strings.Contains(receipt, want) {
			t.Errorf("the failed run's receipt lacks %q:\n%s", want, receipt)
		}
	}
	var charged string
	run(t, ctx, "charged", chromedp.Evaluate(`[...document.querySelectorAll("main tr")].find(r => r.querySelector("th")?.textContent === "charged")?.querySelector("td")?.textContent`, &charged))
	if charged != "0 USDC" && charged != "0.00 USDC" && charged != "0.000000 USDC" {
		t.Errorf("a failed run's receipt charges %q", charged)
	}

	// Paused, it cannot be run from its page.
	st := crtx.AgentPaused
	if _, err := cc.UpdateListing(context.Background(), id, crtx.ListingParams{Status: &st}); err != nil {
		t.Fatal(err)
	}
	var forms, snippets int
	run(t, ctx, "paused", chromedp.Navigate(d.URL+"/agents/"+id), chromedp.WaitVisible("#params"),
		chromedp.Evaluate(`document.querySelectorAll('form[action$="/run"]').length`, &forms),
		chromedp.Evaluate(`document.querySelectorAll('#curl, #cli').length`, &snippets))
	if forms != 0 || snippets != 0 || !strings.Contains(text(t, ctx, "#main"), "takes no executions now") {
		t.Errorf("a paused agent's page: %d run forms, %d snippets", forms, snippets)
	}
}
