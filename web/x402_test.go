package web_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/x402"
)

// An agent of a marketplace with a chain offers to be paid per call with
// x402: the page says a failed call costs nothing, and its snippets (the
// official TypeScript and Python clients, and the command line) name this
// agent's execute URL; the TypeScript and Python programs parse. Without a
// chain the page offers none.
func TestAgentPagePayPerCallWithX402(t *testing.T) {
	m := marketOnChain(t)
	id := greeter(t, m.Daemon)
	page := get(t, m.URL+"/agents/"+id)
	pre := func(name string) string {
		t.Helper()
		got := regexp.MustCompile(`(?s)<pre tabindex="0" id="` + name + `">(.*?)</pre>`).FindStringSubmatch(page)
		if got == nil {
			t.Fatalf("the agent page has no <pre id=%q>", name)
		}
		return html.UnescapeString(got[1])
	}
	url := m.URL + "/v1/agents/" + id + "/execute"
	if !strings.Contains(page, `<h2 id="x402">Pay per call with x402</h2>`) || !strings.Contains(page, "a call that fails costs nothing") {
		t.Fatal("the page offers no x402 payment")
	}
	fetch, python, cli := pre("x402-fetch"), pre("x402-python"), pre("x402-cli")
	for name, s := range map[string]string{"fetch": fetch, "python": python} {
		if !strings.Contains(s, url) {
			t.Errorf("the %s snippet does not call %s:\n%s", name, url, s)
		}
	}
	if !strings.Contains(fetch, "wrapFetchWithPayment") || !strings.Contains(python, "wrapRequestsWithPayment") ||
		!strings.HasPrefix(cli, "crtx run "+id+" ") || !strings.Contains(cli, "--x402 --keypair payer.json --rpc ") {
		t.Errorf("snippets:\n%s\n%s\n%s", fetch, python, cli)
	}
	dir := t.TempDir()
	for file, src := range map[string]string{"pay.mjs": fetch, "pay.py": python} {
		os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644)
	}
	if out, err := exec.Command("node", "--check", filepath.Join(dir, "pay.mjs")).CombinedOutput(); err != nil {
		t.Errorf("the TypeScript snippet does not parse: %v\n%s", err, out)
	}
	if out, err := exec.Command("python3", "-m", "py_compile", filepath.Join(dir, "pay.py")).CombinedOutput(); err != nil {
		t.Errorf("the Python snippet does not parse: %v\n%s", err, out)
	}

	d := market(t)
	if page := get(t, d.URL+"/agents/"+greeter(t, d)); strings.Contains(page, `id="x402"`) {
		t.Error("a marketplace without a chain offers x402")
	}
}

// get reads a page that must answer 200.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}

// A call paid with x402 that fails before its payment is sent costs
// nothing and refunds nothing: the payer's history, its CSV and the
// execution's page say so, not "refunded" for money that never moved.
func TestX402FailureChargesNothingInThePages(t *testing.T) {
	m := marketOnChain(t)
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) {
		return "", 0, errors.New("the model is down")
	}, creator.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cc, _ := newCreator(t, m.URL)
	str := func(s string) *string { return &s }
	// A timeout within the settle-after bound: the payment is sent only
	// after a result, so a failure leaves it unsent and void.
	endpoint, pub, price, tags, timeout := srv.URL+"/execute", h.PublicKey(), crtx.USDC(20_000), []string{"data"}, 5
	a, err := cc.WithAgentKey(key).CreateListing(ctx, crtx.ListingParams{Name: str("Broken"), Tagline: str("Fails."), Description: str("Fails."),
		Tags: &tags, InputSchema: rawJSON(`{"type":"object"}`), OutputSchema: rawJSON(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub, TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}

	_, payer, _ := ed25519.GenerateKey(nil)
	m.net.MintTo(t, m.mint, m.mintAuth, crtx.Address(payer.Public().(ed25519.PublicKey)), crtx.MicroPerUSDC)
	anon := client.New(m.URL, "")
	p := crtx.ExecuteParams{Task: "fail"}
	pr, err := anon.PaymentRequired(ctx, a.AgentID, p)
	if err != nil || len(pr.Accepts) != 1 {
		t.Fatalf("payment required: %+v %v", pr, err)
	}
	tx, err := chain.X402Payment(ctx, m.net.RPC, payer, pr.Accepts[0])
	if err != nil {
		t.Fatal(err)
	}
	payload := x402.PaymentPayload{X402Version: x402.Version, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
	payload.Payload.Transaction = tx
	if _, sr, err := anon.ExecutePaid(ctx, a.AgentID, p, payload, ""); err == nil || sr.Success {
		t.Fatalf("a failing agent paid with x402: %+v %v", sr, err)
	}

	_, s, err := client.New(m.URL, "").SignIn(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	b := &browserLike{t: t, base: m.URL, cookies: map[string]string{"crtx_session": s.SessionToken}}
	_, page := b.send("GET", "/dashboard/", nil)
	ids := regexp.MustCompile(`/dashboard/executions/([0-9a-f-]{36})"`).FindAllStringSubmatch(page, -1)
	if len(ids) == 0 {
		t.Fatalf("the payer's history lists no execution:\n%s", page)
	}
	id := ids[0][1]
	var row string
	for _, r := range strings.Split(page, "<tr") {
		if strings.Contains(r, id) {
			row = r
		}
	}
	if !strings.Contains(row, `data-label="charged, USDC">0</td>`) || strings.Contains(row, "refunded") {
		t.Errorf("the history's row of the failed x402 call: %s", row)
	}
	if _, csv := b.send("GET", "/dashboard/executions.csv", nil); !strings.Contains(csv, id+","+a.AgentID+",Broken,devnet,failed,0.02,0,0,") {
		t.Errorf("the CSV of the failed x402 call:\n%s", csv)
	}
	_, page = b.send("GET", "/dashboard/executions/"+id, nil)
	if !strings.Contains(page, "<tr><th>charged</th><td class=\"num\"><b>0 USDC</b></td></tr>") || strings.Contains(page, "<th>refunded</th>") {
		t.Errorf("the execution page of the failed x402 call charges something or refunds it:\n%s", page)
	}
}
