package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/store/storetest"
)

const adminToken = "browser-test-admin-token-0123456789"

// browser starts headless Chromium (Debian's; .ci/run installs it). Without
// it the test is skipped on a developer's machine and fails in CI.
func browser(t *testing.T) context.Context {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; browser tests may not be skipped in CI")
		}
		t.Skip("install Debian's chromium to run the browser tests")
	}
	// The profile is removed by hand after the browser has closed: its
	// helpers may still be writing when a test's TempDir is cleaned up.
	profile, err := os.MkdirTemp("", "crtx-chromium")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1200, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel2 := chromedp.NewContext(actx)
	// A bound against a hung browser, not a measure: the accessibility test
	// alone takes half a minute, and took over five minutes under the race
	// detector on PostgreSQL with the other packages' tests running.
	ctx, cancel3 := context.WithTimeout(bctx, 12*time.Minute)
	t.Cleanup(func() {
		cancel3()
		cancel2()
		cancel() // kills the browser and waits for it
		// Its helper processes may linger a moment; removal is best effort.
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// market starts a marketplace on 127.0.0.1 with SQLite in a temporary
// folder (PostgreSQL with CRTX_TEST_ENGINE=postgres); each change adjusts
// its configuration first.
func market(t *testing.T, changes ...func(*daemon.Config)) *daemon.Daemon {
	data := t.TempDir()
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte(adminToken), 0o600)
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.AdminTokenFile, cfg.AllowPrivateEndpoints = "127.0.0.1:0", data, token, true
	cfg.BlockInterval, cfg.LogOutput = 50*time.Millisecond, io.Discard
	if os.Getenv("CRTX_TEST_ENGINE") == "postgres" {
		cfg.DB = storetest.SchemaDSN(t) // the pages on PostgreSQL, in a schema of this test's own
	}
	for _, change := range changes {
		change(&cfg)
	}
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// screenshot writes the page to the artifacts folder ($CRTX_ARTIFACTS, or
// crtx-screenshots in the temp folder).
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("CRTX_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "crtx-screenshots")
	}
	os.MkdirAll(dir, 0o755)
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// appears waits until the page shows an element sel selects. It asks the
// page itself, as landed does, rather than wait on chromedp's copy of the
// DOM: under load a navigation once left that copy stale, and a wait on
// it never ended though the heading had long been shown.
func appears(sel string) chromedp.Action {
	return seen(sel, func(string) {})
}

// text waits until the page shows an element sel selects and says its
// text.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var s string
	run(t, ctx, "text of "+sel, seen(sel, func(text string) { s = text }))
	return s
}

// seen waits until the page shows an element sel selects, and gives its
// text to got.
func seen(sel string, got func(string)) chromedp.Action {
	q, _ := json.Marshal(sel)
	js := `(() => { const e = document.querySelector(` + string(q) + `);
  return e && e.getClientRects().length && getComputedStyle(e).visibility !== "hidden" ? [e.innerText] : null; })()`
	return poll(js, func(v any) bool {
		shown, _ := v.([]any)
		if len(shown) != 1 {
			return false
		}
		s, _ := shown[0].(string)
		got(s)
		return true
	})
}

// run runs one step of a test in the browser. A step that waits for what
// never comes fails after stepBound with where the page was and what its
// status lines said, rather than hold the package until its timeout kills
// it with no word of why.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	step := ctx
	// A tab is opened by its first run, and closed when that run's context
	// ends: only a tab already open takes a bound of its own.
	if c := chromedp.FromContext(ctx); c != nil && c.Target != nil {
		var cancel context.CancelFunc
		step, cancel = context.WithTimeout(ctx, stepBound)
		defer cancel()
	}
	if err := chromedp.Run(step, actions...); err != nil {
		t.Fatalf("%s: %v (%s)", what, err, pageState(ctx))
	}
}

// landed waits until the page's address holds part: a form's answer has
// loaded. A wait for an element started while the form's page still stood
// could miss the new page's under load, and hang.
func landed(part string) chromedp.Action {
	return poll(`location.href`, func(v any) bool {
		href, _ := v.(string)
		return strings.Contains(href, part)
	})
}

// poll evaluates js in the page until ok takes its answer. An evaluation
// during a navigation may fail: it is tried again.
func poll(js string, ok func(any) bool) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		for {
			var v any
			if chromedp.Evaluate(js, &v).Do(ctx) == nil && ok(v) {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// stepBound is far past what a step takes on a loaded machine (seconds):
// a bound against a wait that never ends, not a measure.
const stepBound = 3 * time.Minute

// pageState says where the page is and what its status lines say.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var state string
	err := chromedp.Run(ctx, chromedp.Evaluate(`location.href + " — " + Array.from(document.querySelectorAll("[role=status], [role=alert], .error, .ok"))
		.map((e) => e.textContent.trim()).filter(Boolean).join(" | ")`, &state))
	if err != nil {
		return "page not readable: " + err.Error()
	}
	return "page " + state
}

// agentKeys are the agent signing keys of the tests' services, by public
// key, for the tests to sign listing statements as their holders.
var agentKeys sync.Map

// agentKeyOf is the key of a service's public key.
func agentKeyOf(pub string) ed25519.PrivateKey {
	k, _ := agentKeys.Load(pub)
	key, _ := k.(ed25519.PrivateKey)
	return key
}

// keyFileOf is the key file (Solana CLI format) of a service's public key,
// as a creator pastes it into a listing form.
func keyFileOf(pub string) string {
	key := agentKeyOf(pub)
	n := make([]int, len(key))
	for i, c := range key {
		n[i] = int(c)
	}
	b, _ := json.Marshal(n)
	return string(b)
}

// service is a creator's execution service on 127.0.0.1.
func service(t *testing.T) (string, string) {
	_, key, _ := ed25519.GenerateKey(nil)
	agentKeys.Store(crtx.Address(key.Public().(ed25519.PublicKey)), key)
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		return "Bonjour, " + r.Task + " ✓", 0, nil
	}, creator.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/execute", h.PublicKey()
}

// greeter lists an agent, "Greeter", for a new creator with mainnet funds
// for its collateral, and returns its id.
func greeter(t *testing.T, d *daemon.Daemon) string {
	t.Helper()
	id, _ := greeterOf(t, d)
	return id
}

// newCreator is a new wallet of the marketplace at url, holding 100 USDC
// on mainnet for collateral, signed in: its client and session token.
func newCreator(t *testing.T, url string) (*client.Client, string) {
	t.Helper()
	_, ck, _ := ed25519.GenerateKey(nil)
	if _, err := client.New(url, adminToken).Deposit(context.Background(), crtx.Mainnet, crtx.Address(ck.Public().(ed25519.PublicKey)), 100*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	cc, s, err := client.New(url, "").SignIn(context.Background(), ck)
	if err != nil {
		t.Fatal(err)
	}
	return cc, s.SessionToken
}

// caller is a new wallet of a marketplace, signed in: its address, its
// session token and a client acting with the session.
type caller struct {
	wallet, session string
	*client.Client
}

func newCaller(t *testing.T, url string) caller {
	t.Helper()
	_, wk, _ := ed25519.GenerateKey(nil)
	c, s, err := client.New(url, "").SignIn(context.Background(), wk)
	if err != nil {
		t.Fatal(err)
	}
	return caller{crtx.Address(wk.Public().(ed25519.PublicKey)), s.SessionToken, c}
}

// devnetKey is a devnet API key of a new wallet holding 1 USDC of
// devnet's test money.
func devnetKey(t *testing.T, url string) string {
	t.Helper()
	c := newCaller(t, url)
	if _, err := c.Airdrop(context.Background(), c.wallet, crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	key, err := c.CreateKey(context.Background(), client.KeyParams{Name: "k", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	return key.Key
}

// greeterOf is greeter, also returning the creator's session token.
func greeterOf(t *testing.T, d *daemon.Daemon) (string, string) {
	t.Helper()
	cc, session := newCreator(t, d.URL)
	endpoint, pub := service(t)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtx.USDC(50_000), []string{"writing"}
	a, err := cc.WithAgentKey(agentKeyOf(pub)).CreateListing(context.Background(), crtx.ListingParams{Name: str("Greeter"), Tagline: str("Greets."),
		Description: str("Greets in French."), Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`),
		PricingModel: str("pay_per_use"), Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub})
	if err != nil {
		t.Fatal(err)
	}
	return a.AgentID, session
}

// A new user signs in with a key made in the browser, gets devnet funds,
// creates an API key, sees an execution made with that key and verifies it.
// A creator lists an agent, runs the test tool, pauses and resumes it. The
// operator signs in with the admin token. Each main page is photographed.
func TestDashboardsInTheBrowser(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	admin := client.New(d.URL, adminToken)

	// The creator signs in in the browser too, and gets mainnet funds for collateral.
	run(t, ctx, "open sign-in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"))
	screenshot(t, ctx, "login")
	run(t, ctx, "sign in", chromedp.Click("#generate-wallet"), appears(`form[action="/dashboard/airdrop"]`))
	wallet := strings.TrimSpace(text(t, ctx, "main p.mono"))
	if _, err := crtx.ParseAddress("wallet", wallet); err != nil {
		t.Fatalf("the dashboard shows %q as the wallet", wallet)
	}
	if _, err := admin.Deposit(context.Background(), crtx.Mainnet, wallet, 100*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	endpoint, pub := service(t)

	// Creator: list, test, edit, change the key, pause, resume. The listing
	// form is sent with a click, as a person sends it, so that app.js signs
	// it (chromedp.Submit calls form.submit(), which skips the submit event).
	run(t, ctx, "creator page", chromedp.Navigate(d.URL+"/dashboard/creator?tab=new"), appears(`form[action="/dashboard/creator/agents"]`))
	run(t, ctx, "fill listing",
		chromedp.SetValue(`input[name=name]`, "Greeter"), chromedp.SetValue(`input[name=tagline]`, "Greets in French."),
		chromedp.SetValue(`textarea[name=description]`, "Says bonjour to whoever you name."),
		chromedp.SetValue(`input[name=tags]`, "writing"), chromedp.SetValue(`input[name=price_per_call_usdc]`, "0.05"),
		chromedp.SetValue(`form[action="/dashboard/creator/agents"] input[name=endpoint_url]`, endpoint),
		chromedp.SetValue(`form[action="/dashboard/creator/agents"] input[name=signing_public_key]`, pub),
		chromedp.SetValue(`form[action="/dashboard/creator/agents"] textarea[data-agent-key]`, keyFileOf(pub)),
		chromedp.Click(`ol.wizard-steps li[data-step="2"] a`, chromedp.ByQuery), appears("#wizard-test"),
		chromedp.Click("#wizard-test", chromedp.ByQuery), appears(`#wizard-report [data-passed="true"]`),
		chromedp.Click(`ol.wizard-steps li[data-step="4"] a`, chromedp.ByQuery), appears(`#review dt`))
	// The review lists what is sent and the collateral it locks.
	if got := text(t, ctx, "#review"); !strings.Contains(got, "Greeter") || !strings.Contains(got, "locks 10 USDC of collateral") {
		t.Errorf("the listing's review: %q", got)
	}
	run(t, ctx, "list", chromedp.Click(`form[action="/dashboard/creator/agents"] button[type=submit]`, chromedp.ByQuery), appears(`.ok`))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Listed Greeter") {
		t.Fatalf("listing: %q", got)
	}
	listed, err := client.New(d.URL, "").Agents(context.Background(), nil)
	if err != nil || len(listed.Agents) != 1 {
		t.Fatalf("catalog = %+v, %v", listed, err)
	}
	// signedBy checks that the newest kind transaction of the listing
	// carries the browser wallet's signature of its listing statement.
	signedBy := func(kind crtx.TxKind, key string) {
		t.Helper()
		v, err := client.New(d.URL, "").Account(context.Background(), crtx.Mainnet, crtx.AccountAddress(crtx.AccountListing, listed.Agents[0].AgentID))
		if err != nil {
			t.Fatal(err)
		}
		for _, lt := range v.Transactions {
			if lt.Kind != kind {
				continue
			}
			stmt, err := crtx.ListingStatement(lt.Kind, lt.Data)
			creator, perr := crtx.ParseAddress("wallet", wallet)
			if err != nil || perr != nil || lt.Data["creator"] != wallet || lt.Data["signing_public_key"] != key ||
				!crtx.VerifyBase58(creator, stmt, lt.Data["creator_signature"]) ||
				!crtx.VerifyBase58(agentKeyOf(key).Public().(ed25519.PublicKey), stmt, lt.Data["key_signature"]) {
				t.Errorf("%s data %v: not signed by the browser's wallet and the pasted key file (%v)", kind, lt.Data, err)
			}
			return
		}
		t.Errorf("no %s transaction", kind)
	}
	signedBy(crtx.TxAgentListed, pub)
	run(t, ctx, "test tool", chromedp.Navigate(d.URL+"/dashboard/creator?tab=test"), appears(`form[action="/dashboard/creator/test"]`),
		chromedp.SetValue(`form[action="/dashboard/creator/test"] input[name=endpoint_url]`, endpoint),
		chromedp.SetValue(`form[action="/dashboard/creator/test"] input[name=signing_public_key]`, pub),
		chromedp.Submit(`form[action="/dashboard/creator/test"] button`), appears("#report"))
	var kept string
	run(t, ctx, "kept", chromedp.Value(`form[action="/dashboard/creator/test"] input[name=endpoint_url]`, &kept, chromedp.ByQuery))
	if rep := text(t, ctx, "#report"); !strings.Contains(rep, "✓ The signature verifies") || strings.Contains(rep, "✗") || kept != endpoint {
		t.Errorf("test tool report: %q, the endpoint field keeps %q", rep, kept)
	}
	run(t, ctx, "edit", chromedp.Navigate(d.URL+"/dashboard/creator?tab=listings"), appears(`a[href$="/edit"]`), chromedp.Click(`a[href$="/edit"]`), appears(`input[name=tagline]`),
		chromedp.SetValue(`input[name=tagline]`, "Greets in French, politely."), chromedp.Submit(`input[name=tagline]`), appears(`.ok`))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Saved Greeter") {
		t.Errorf("edit: %q", got)
	}
	endpoint, pub = service(t)
	run(t, ctx, "change the key", chromedp.Click(`a[href$="/edit"]`), appears(`input[name=signing_public_key]`),
		chromedp.SetValue(`input[name=endpoint_url]`, endpoint), chromedp.SetValue(`input[name=signing_public_key]`, pub),
		chromedp.SetValue(`form[action$="/edit"] textarea[data-agent-key]`, keyFileOf(pub)),
		chromedp.Click(`form[action$="/edit"] button`), appears(`.ok`))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Saved Greeter") {
		t.Errorf("key change: %q", got)
	}
	signedBy(crtx.TxListingUpdated, pub)
	run(t, ctx, "pause", chromedp.Submit(`form[action$="/pause"] button`), appears(`.status-paused`))
	run(t, ctx, "resume", chromedp.Submit(`form[action$="/resume"] button`), appears(`form[action$="/pause"]`))
	// A listing the marketplace refuses shows why beside each field at
	// fault, all at once, with the form as typed.
	lf := `form[action="/dashboard/creator/agents"] `
	run(t, ctx, "bad listing", chromedp.Navigate(d.URL+"/dashboard/creator?tab=new"), appears(lf+`input[name=name]`), chromedp.SetValue(lf+`input[name=name]`, "Broken", chromedp.ByQuery), chromedp.SetValue(lf+`input[name=tagline]`, " ", chromedp.ByQuery),
		chromedp.SetValue(lf+`input[name=tags]`, "Not A Slug", chromedp.ByQuery), chromedp.SetValue(lf+`input[name=price_per_call_usdc]`, "0.0000001", chromedp.ByQuery),
		chromedp.Submit(`form[action="/dashboard/creator/agents"] button[type=submit]`), appears(`#error-summary`))
	var marked map[string]string
	run(t, ctx, "fields marked", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll(".field-error")].map(e => [e.parentElement.querySelector("[name]").name, e.textContent]))`, &marked))
	var name string
	run(t, ctx, "kept", chromedp.Value(`input[name=name]`, &name, chromedp.ByQuery))
	if !strings.Contains(marked["price_per_call_usdc"], "decimals") || marked["tagline"] != "Is required." || !strings.Contains(marked["tags"], "lowercase slug") ||
		name != "Broken" {
		t.Errorf("fields marked %v, name kept %q", marked, name)
	}
	// The summary above the form names each field by its label, takes the
	// focus, and the form opens at the step of the first fault.
	var focused string
	var open int
	run(t, ctx, "summary", appears("ol.wizard-steps"), chromedp.Poll(`document.activeElement.id === "error-summary"`, nil, chromedp.WithPollingTimeout(0)), // the step's bound, not a measure
		chromedp.Evaluate(`document.activeElement.id`, &focused),
		chromedp.Evaluate(`Number([...document.querySelectorAll("fieldset.step")].find(f => !f.hidden).dataset.step)`, &open))
	summary := text(t, ctx, "#error-summary")
	for _, want := range []string{"Tagline: Is required.", "Tags: ", "Price per call: ", "Signing public key: "} {
		if !strings.Contains(summary, want) {
			t.Errorf("the error summary lacks %q:\n%s", want, summary)
		}
	}
	if focused != "error-summary" || open != 1 || strings.Contains(summary, "signing_public_key") {
		t.Errorf("after a refusal the focus is on %q and step %d is open; the summary:\n%s", focused, open, summary)
	}
	screenshot(t, ctx, "creator")

	// The user: funds, a key, an execution, verification.
	run(t, ctx, "dashboard", chromedp.Navigate(d.URL+"/dashboard/"), appears(`form[action="/dashboard/airdrop"]`),
		chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("sent="), appears(".ok"))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "100 USDC airdropped") {
		t.Errorf("airdrop: %q", got)
	}
	run(t, ctx, "keys", chromedp.Navigate(d.URL+"/dashboard/keys"), appears(`input[name=name]`),
		chromedp.SetValue(`input[name=name]`, "browser"), chromedp.Submit(`form[action="/dashboard/keys"] button`), appears("#new-key"))
	key := strings.TrimSpace(text(t, ctx, "#new-key"))
	if !strings.HasPrefix(key, "crtx_test_") {
		t.Fatalf("new key %q", key)
	}
	screenshot(t, ctx, "keys")
	page, err := client.New(d.URL, "").Agents(context.Background(), nil)
	if err != nil || len(page.Agents) != 1 {
		t.Fatalf("catalog = %+v, %v", page, err)
	}
	agentID := page.Agents[0].AgentID
	rec, err := client.New(d.URL, key).Execute(context.Background(), agentID, crtx.ExecuteParams{Task: "Ada"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "history", chromedp.Navigate(d.URL+"/dashboard/"), appears(fmt.Sprintf(`a[href="/dashboard/executions/%s"]`, rec.ExecutionID)))
	screenshot(t, ctx, "dashboard")
	run(t, ctx, "execution", chromedp.Click(fmt.Sprintf(`a[href="/dashboard/executions/%s"]`, rec.ExecutionID)),
		appears("#verify"), chromedp.Click("#verify"), appears("#verify-out.ok"))
	if got := text(t, ctx, "#result"); got != "Bonjour, Ada ✓" {
		t.Errorf("result shown: %q", got)
	}
	screenshot(t, ctx, "execution")

	// The creator's earnings of that execution, on a chart with its axes.
	var axes string
	if err := d.Market.Ledger.RollupAll(context.Background()); err != nil { // the statistics count the run
		t.Fatal(err)
	}
	run(t, ctx, "earnings", chromedp.Navigate(d.URL+"/dashboard/creator?environment=devnet"), appears("svg.chart"),
		chromedp.Evaluate(`[...document.querySelectorAll("svg.chart text")].map(t => t.textContent).join(" ")`, &axes))
	if today := time.Now().UTC().Format("2006-01-02"); !strings.Contains(axes, today) || !strings.Contains(axes, "0.0495") || !strings.Contains(axes, "USDC") {
		t.Errorf("the earnings chart's axes read %q; want today's date and 0.0495 USDC", axes)
	}
	// The run was the creator's own: earned, but no public statistic.
	if got := text(t, ctx, `div[aria-label="Your agents"] table`); !strings.Contains(got, "Greeter\tactive\t0\t—\t—\t0.0495") {
		t.Errorf("the overview's agents on devnet: %q", got)
	}
	if got := text(t, ctx, "#runs-note"); !strings.Contains(got, "your own calls") {
		t.Errorf("the overview does not say why its runs leave out the creator's own: %q", got)
	}

	// Public pages, and the operator's.
	run(t, ctx, "home", chromedp.Navigate(d.URL+"/"), appears(".card"))
	screenshot(t, ctx, "home")
	run(t, ctx, "agent", chromedp.Navigate(d.URL+"/agents/"+agentID), appears("#curl"))
	if got := text(t, ctx, "body > main"); !strings.Contains(got, "Greets in French, politely.") {
		t.Error("the agent page does not show the edited tagline")
	}
	screenshot(t, ctx, "agent")
	run(t, ctx, "operator", chromedp.Navigate(d.URL+"/dashboard/operator"), appears(`input[name=token]`),
		chromedp.SetValue(`input[name=token]`, adminToken), chromedp.Submit(`input[name=token]`), appears(`form[action="/dashboard/operator/creators"]`))
	screenshot(t, ctx, "operator")

	// Every main page is usable at 375 px: nothing wider than the screen.
	run(t, ctx, "narrow", emulation.SetDeviceMetricsOverride(375, 800, 2, true))
	for _, p := range []string{"/", "/agents/" + agentID, "/login", "/dashboard/", "/dashboard/keys", "/dashboard/creator",
		"/dashboard/executions/" + rec.ExecutionID, "/dashboard/operator", "/explorer/", "/docs", "/agents/agt_nothing",
		"/dashboard/creator?tab=listings", "/dashboard/creator?tab=new", "/explorer/account/" + crtx.AccountAddress(crtx.AccountListing, agentID)} {
		var width int
		run(t, ctx, "narrow "+p, chromedp.Navigate(d.URL+p), chromedp.WaitReady("body"),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &width))
		if width > 375 {
			t.Errorf("%s is %d px wide at 375 px", p, width)
		}
	}
	screenshot(t, ctx, "explorer-375")
	// Signed in on a phone, the header is one row: its links are in a menu.
	var header float64
	var menu string
	run(t, ctx, "header", chromedp.Navigate(d.URL+"/dashboard/keys"), appears("details.menu summary"),
		chromedp.Evaluate(`document.querySelector("header").getBoundingClientRect().height`, &header),
		chromedp.Click("details.menu summary", chromedp.ByQuery), appears(`details.menu a[href="/dashboard/creator"]`),
		chromedp.Evaluate(`[...document.querySelectorAll("details.menu nav a")].map(a => a.textContent).join(" ")`, &menu))
	if header > 60 || menu != "Agents Explorer API Dashboard Keys Creator" {
		t.Errorf("the signed-in header at 375 px: %.0f px high, its menu %q", header, menu)
	}
	screenshot(t, ctx, "menu-375")
	// On a phone, tables of executions, keys and listings are cards, each
	// value beside its name.
	var display, label string
	run(t, ctx, "rows as cards", chromedp.Navigate(d.URL+"/dashboard/"), appears("table.rows"),
		chromedp.Evaluate(`getComputedStyle(document.querySelector("table.rows tr:nth-child(2)")).display`, &display),
		chromedp.Evaluate(`getComputedStyle(document.querySelector("table.rows td[data-label]"), "::before").content`, &label))
	if display != "block" || label != `"agent, task and result: "` {
		t.Errorf("executions at 375 px: rows %q, labels %s", display, label)
	}
	screenshot(t, ctx, "dashboard-375")
}

// The catalog, an agent and the explorer read without JavaScript.
func TestPagesReadWithoutJavaScript(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	agentID := greeter(t, d)
	run(t, ctx, "no scripts", emulation.SetScriptExecutionDisabled(true))
	for p, want := range map[string]string{"/": "Greeter", "/?q=french&tag=writing": "Greets.", "/agents/" + agentID: "Greets in French.",
		"/explorer/": "Latest blocks", "/login": "crtx session"} {
		var body string
		run(t, ctx, p, chromedp.Navigate(d.URL+p), chromedp.WaitReady("body"), chromedp.Text("body", &body))
		if !strings.Contains(body, want) {
			t.Errorf("%s without JavaScript lacks %q", p, want)
		}
	}
	resp, err := http.Get(d.URL + "/dashboard/keys")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/login" {
		t.Errorf("a visitor reached %s", resp.Request.URL.Path)
	}
}
