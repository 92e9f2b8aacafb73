package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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
	"formal":{"type":"boolean","default":false},
	"delimiter":{"type":"string","maxLength":1}},"required":["lang","n"]}`

// translator lists an agent with required parameters whose service
// answers with the parameters it got; it returns the agent's id and the
// creator's client.
func translator(t *testing.T, url string) (string, *client.Client) {
	t.Helper()
	ctx := context.Background()
	cc, _ := newCreator(t, url)
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

	run(t, ctx, "agent page", chromedp.Navigate(d.URL+"/agents/"+id), appears("#params"))
	params := text(t, ctx, "#params")
	for _, want := range []string{"lang", "string: fr, en", "required", "the language to answer in", "formal", "false"} {
		if !strings.Contains(params, want) {
			t.Errorf("the parameters table lacks %q:\n%s", want, params)
		}
	}
	if stats := text(t, ctx, ".grid2"); !strings.Contains(stats, "new") || strings.Contains(stats, "0% success") {
		t.Errorf("an agent without runs shows %q", stats)
	}
	if !strings.Contains(text(t, ctx, "#try"), "Try it") || !strings.Contains(text(t, ctx, "#main"), "Sign in to run it") {
		t.Error("a visitor is not told how to try the agent")
	}
	if got := text(t, ctx, ".creator-card"); !strings.Contains(got, "the creator's one agent in the catalog") {
		t.Errorf("the creator's card: %q", got)
	}
	// Code in tabs, one per language, each a program that runs as pasted.
	code := map[string]string{}
	run(t, ctx, "code", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll(".codetabs pre")].map(p => [p.id, p.textContent]))`, &code))
	var tabs string
	run(t, ctx, "tabs", chromedp.Evaluate(`[...document.querySelectorAll(".codetabs [role=tab]")].map(b => b.textContent + (b.getAttribute("aria-selected") === "true" ? "*" : "")).join(" ")`, &tabs))
	if tabs != "curl* CLI Python TypeScript Go" {
		t.Errorf("the code's tabs: %q", tabs)
	}
	curl := code["curl"]
	if cli := code["cli"]; !strings.Contains(cli, "--param 'lang=fr' --param 'n=3'") {
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
	for lang, program := range map[string]string{"python": code["python"], "typescript": code["typescript"], "go": code["go"]} {
		out, ran := runSample(t, lang, program, created.Key)
		if !ran {
			continue
		}
		if !strings.HasPrefix(out, "completed ") || !strings.Contains(out, `"n":3`) || !strings.Contains(out, `"lang":"fr"`) {
			t.Errorf("the %s sample as pasted printed:\n%s", lang, out)
		}
	}

	// A person who just signed in runs it from the page with the session:
	// devnet test money added from the page, no API key made first.
	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/agents/"+id), appears(`#try a[href^="/login?next="]`),
		chromedp.Click(`#try a[href^="/login?next="]`, chromedp.ByQuery), landed("/login"), appears("#generate-wallet"))
	if got := text(t, ctx, "main > .ok"); !strings.Contains(got, "Sign in to open the agent's page and run it") {
		t.Errorf("the sign-in page from an agent's page says %q", got)
	}
	run(t, ctx, "signed in", chromedp.Click("#generate-wallet", chromedp.ByQuery), landed("/agents/"+id+"#try"),
		appears(`form[action="/dashboard/airdrop"]`))
	if got := text(t, ctx, ".try-out"); !strings.Contains(got, "lacks 0.01 USDC") {
		t.Errorf("a new wallet is not told it lacks devnet money: %q", got)
	}
	run(t, ctx, "airdrop from the agent page", chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("/agents/"+id),
		appears(".ok"), appears(`form[action$="/run"]`))
	if n := count(t, ctx, `form[action="/dashboard/airdrop"]`); n != 0 {
		t.Error("the airdrop button stays once the balance covers a run")
	}
	run(t, ctx, "try it", chromedp.SetValue(`textarea[name=task]`, "Bonjour", chromedp.ByQuery), chromedp.SetValue(`select[name="param.lang"]`, "en", chromedp.ByQuery),
		chromedp.SetValue(`input[name="param.n"]`, "two", chromedp.ByQuery), chromedp.SetValue(`input[name="param.delimiter"]`, ";;", chromedp.ByQuery),
		chromedp.Click(`form[action$="/run"] button`), landed("sent="), appears(".error"))
	var n string
	run(t, ctx, "kept", chromedp.Value(`input[name="param.n"]`, &n, chromedp.ByQuery))
	if e := text(t, ctx, "#err-param-n"); !strings.Contains(e, "is not a whole number") || n != "two" {
		t.Errorf("a bad parameter: %q, the field keeps %q", e, n)
	}
	if e := text(t, ctx, ".error"); !strings.Contains(e, "Nothing was run or charged") {
		t.Errorf("a refused run says %q", e)
	}
	// The marketplace's own check of the schema speaks in words, under the field.
	run(t, ctx, "schema", chromedp.SetValue(`input[name="param.n"]`, "2", chromedp.ByQuery), chromedp.Click(`form[action$="/run"] button`),
		landed("sent="), appears("#err-param-delimiter"))
	if e := text(t, ctx, "#err-param-delimiter"); !strings.Contains(e, "At most 1 character") {
		t.Errorf("a value past the schema's maxLength: %q", e)
	}
	var described string
	run(t, ctx, "described", chromedp.AttributeValue(`input[name="param.delimiter"]`, "aria-describedby", &described, nil, chromedp.ByQuery))
	if described != "err-param-delimiter" {
		t.Errorf("the field names its error as %q", described)
	}
	run(t, ctx, "try again", chromedp.SetValue(`input[name="param.delimiter"]`, ";", chromedp.ByQuery), chromedp.Click(`form[action$="/run"] button`),
		landed("run="), appears("#run [data-final]"))
	if got := text(t, ctx, "#result"); !strings.Contains(got, "\"lang\": \"en\"") || !strings.Contains(got, "\"n\": 2") {
		t.Errorf("the result of the page's run, inline and pretty-printed: %q", got)
	}
	screenshot(t, ctx, "agent-run-completed")
	if got := text(t, ctx, "#run"); !strings.Contains(got, "0.01 USDC charged") {
		t.Errorf("the run says %q", got)
	}
	if got := text(t, ctx, `form[action$="/run"] button`); !strings.HasPrefix(got, "Run again") {
		t.Errorf("the form's button after a run reads %q", got)
	}
	run(t, ctx, "receipt", chromedp.Click(`#run a[href^="/dashboard/executions/"]`, chromedp.ByQuery), landed("/dashboard/executions/"),
		appears("#verify"), chromedp.Click("#verify", chromedp.ByQuery), appears("#verify-out.ok"))
	if got := text(t, ctx, "#main"); !strings.Contains(got, "charged\t0.01 USDC") && !strings.Contains(got, "charged 0.01 USDC") {
		t.Errorf("the receipt of a completed run does not say it charged 0.01 USDC:\n%s", got)
	}
	// A failed run is told as one, with its money back, not as spent.
	run(t, ctx, "a failing run", chromedp.Navigate(d.URL+"/agents/"+id), appears(`form[action$="/run"]`),
		chromedp.SetValue(`textarea[name=task]`, "fail", chromedp.ByQuery), chromedp.SetValue(`select[name="param.lang"]`, "en", chromedp.ByQuery),
		chromedp.SetValue(`input[name="param.n"]`, "1", chromedp.ByQuery),
		chromedp.Click(`form[action$="/run"] button`), landed("run="), appears("#run [data-final]"))
	if got := text(t, ctx, "#run"); !strings.Contains(got, "failed — 0.01 USDC refunded") || !strings.Contains(got, "cannot translate that") {
		t.Errorf("a failed run says %q", got)
	}
	run(t, ctx, "failed receipt", chromedp.Click(`#run a[href^="/dashboard/executions/"]`, chromedp.ByQuery), landed("/dashboard/executions/"),
		appears("main table"))
	receipt := text(t, ctx, "#main")
	for _, want := range []string{"refunded", "0.01 USDC", "charged"} {
		if !strings.Contains(receipt, want) {
			t.Errorf("the failed run's receipt lacks %q:\n%s", want, receipt)
		}
	}
	// "Run again", a link, looks like the form's buttons: padded, framed.
	var pad, btn string
	run(t, ctx, "a link button's style", chromedp.Evaluate(`(() => { const s = getComputedStyle(document.querySelector("a.button")); return s.paddingLeft + " " + s.borderTopStyle; })()`, &pad),
		chromedp.Evaluate(`(() => { const b = document.createElement("button"); document.body.append(b); const s = getComputedStyle(b); return s.paddingLeft + " " + s.borderTopStyle; })()`, &btn))
	if pad != btn || strings.HasPrefix(pad, "0px") {
		t.Errorf("a link button is styled %q, a button %q", pad, btn)
	}
	// It leads with the outcome and the reason in words, no error code.
	if lead := text(t, ctx, "p.lead"); !strings.HasPrefix(lead, "Failed — 0.01 USDC refunded. The agent failed: ") ||
		!strings.Contains(lead, "cannot translate that") || strings.Contains(receipt, "execution_failed") {
		t.Errorf("the failed run's page leads with %q", lead)
	}
	var charged string
	run(t, ctx, "charged", chromedp.Evaluate(`[...document.querySelectorAll("main tr")].find(r => r.querySelector("th")?.textContent === "charged")?.querySelector("td")?.textContent`, &charged))
	if charged != "0 USDC" && charged != "0.00 USDC" && charged != "0.000000 USDC" {
		t.Errorf("a failed run's receipt charges %q", charged)
	}
	// The runs were charged to the agent pages' key, listed with the rest,
	// whose spent leaves the refunded run out.
	run(t, ctx, "keys", chromedp.Navigate(d.URL+"/dashboard/keys"), appears("main table"))
	if got := text(t, ctx, "main table"); !strings.Contains(got, "Agent pages (devnet)") || !strings.Contains(got, "0.01") {
		t.Errorf("the keys page after two page runs, one refunded:\n%s", got)
	}

	// Paused, it cannot be run from its page.
	st := crtx.AgentPaused
	if _, err := cc.UpdateListing(context.Background(), id, crtx.ListingParams{Status: &st}); err != nil {
		t.Fatal(err)
	}
	var forms, snippets int
	run(t, ctx, "paused", chromedp.Navigate(d.URL+"/agents/"+id), appears("#params"),
		chromedp.Evaluate(`document.querySelectorAll('form[action$="/run"]').length`, &forms),
		chromedp.Evaluate(`document.querySelectorAll('#curl, #cli').length`, &snippets))
	if forms != 0 || snippets != 0 || !strings.Contains(text(t, ctx, "#main"), "takes no executions now") {
		t.Errorf("a paused agent's page: %d run forms, %d snippets", forms, snippets)
	}
}

// count is how many elements of the page match sel.
func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	var n int
	run(t, ctx, "count "+sel, chromedp.Evaluate(`document.querySelectorAll(`+string(must(json.Marshal(sel)))+`).length`, &n))
	return n
}

// runSample runs an agent page's program in lang as a user would, in a
// folder of its own with the SDK from this checkout, with key in
// CRTX_API_KEY, and returns what it printed; false when this machine
// cannot run it (outside CI only).
func runSample(t *testing.T, lang, program, key string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	switch lang {
	case "python":
		py := "/usr/bin/python3"
		if exec.Command(py, "-c", "import cryptography").Run() != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("python3 with the cryptography package is required in CI")
			}
			t.Log("no python3 with the cryptography package: the Python sample is not run")
			return "", false
		}
		os.WriteFile(filepath.Join(dir, "run.py"), []byte(program), 0o644)
		cmd = exec.Command(py, "run.py")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "sdk", "python"), "PYTHONDONTWRITEBYTECODE=1")
	case "typescript":
		mod := filepath.Join(dir, "node_modules", "@crtx-market")
		os.MkdirAll(mod, 0o755)
		if err := os.Symlink(filepath.Join(root, "sdk", "typescript"), filepath.Join(mod, "sdk")); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "run.mjs"), []byte(program), 0o644)
		cmd = exec.Command("node", "run.mjs")
		cmd.Env = os.Environ()
	case "go":
		gomod := "module sample\n\ngo 1.26\n\nrequire github.com/crtx-market/crtx v0.0.0\n\nreplace github.com/crtx-market/crtx => " + root + "\n"
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644)
		os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644)
		tidy := exec.Command("go", "mod", "tidy")
		tidy.Dir = dir
		if out, err := tidy.CombinedOutput(); err != nil {
			t.Fatalf("go mod tidy for the Go sample: %v\n%s", err, out)
		}
		cmd = exec.Command("go", "run", ".")
		cmd.Env = os.Environ()
	}
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "CRTX_API_KEY="+key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the %s sample: %v\n%s", lang, err, out)
	}
	return string(out), true
}
