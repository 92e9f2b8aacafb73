package web_test

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// The operator's rulings in the browser: upheld needs the amounts and a
// confirmation, and moves nothing without them; a resolved dispute stays
// listed with its amounts; the badge goes only to a wallet that listed an
// agent.
func TestOperatorRulings(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	bg := context.Background()
	id := greeter(t, d)
	_, wk, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(wk.Public().(ed25519.PublicKey))
	caller, _, err := client.New(d.URL, "").SignIn(bg, wk)
	if err != nil {
		t.Fatal(err)
	}
	client.New(d.URL, adminToken).Deposit(bg, crtx.Mainnet, wallet, crtx.MicroPerUSDC)
	key, err := caller.CreateKey(bg, client.KeyParams{Name: "live", Environment: crtx.Mainnet})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := client.New(d.URL, key.Key).Execute(bg, id, crtx.ExecuteParams{Task: "Ada"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := client.New(d.URL, key.Key).OpenDispute(bg, rec.ExecutionID, crtx.DisputeParams{Reason: "other", Description: "It greeted in English."})
	if err != nil {
		t.Fatal(err)
	}

	form := `form[action="/dashboard/operator/disputes/` + ds.DisputeID + `"]`
	run(t, ctx, "operator", chromedp.Navigate(d.URL+"/dashboard/operator"), appears(`input[name=token]`),
		chromedp.SetValue(`input[name=token]`, adminToken), chromedp.Submit(`input[name=token]`), appears(form))
	// The form chooses no outcome for the operator: sent without one, it
	// is refused in words.
	run(t, ctx, "no outcome", chromedp.Evaluate(`document.querySelector('`+form+` input[name=confirm]').checked = true`, nil),
		chromedp.Submit(form+" button"), appears(".error"))
	if e := text(t, ctx, ".error"); !strings.Contains(e, "outcome: must be upheld or rejected") {
		t.Errorf("a ruling without an outcome: %q", e)
	}
	upheld := chromedp.SetValue(form+` select[name=outcome]`, "upheld", chromedp.ByQuery)
	run(t, ctx, "upheld without amounts", upheld, chromedp.Evaluate(`document.querySelector('`+form+` input[name=confirm]').checked = true`, nil),
		chromedp.Submit(form+" button"), appears(".error"))
	if e := text(t, ctx, ".error"); !strings.Contains(e, "give the USDC to slash") {
		t.Errorf("upheld without amounts: %q", e)
	}
	run(t, ctx, "upheld without confirmation", upheld, chromedp.SetValue(form+` input[name=slash_usdc]`, "1"),
		chromedp.SetValue(form+` input[name=refund_usdc]`, "0.05"), chromedp.Submit(form+" button"), appears(".error"))
	if e := text(t, ctx, ".error"); !strings.Contains(e, "tick the box") {
		t.Errorf("upheld without confirmation: %q", e)
	}
	if open, err := client.New(d.URL, adminToken).AdminDisputes(bg, "open"); err != nil || len(open) != 1 {
		t.Fatalf("open disputes after two refusals: %d, %v", len(open), err)
	}
	run(t, ctx, "upheld", upheld, chromedp.SetValue(form+` input[name=slash_usdc]`, "1"), chromedp.SetValue(form+` input[name=refund_usdc]`, "0.05"),
		chromedp.Evaluate(`document.querySelector('`+form+` input[name=confirm]').checked = true`, nil),
		chromedp.Submit(form+" button"), appears(".ok"))
	if got := text(t, ctx, "#main"); !strings.Contains(got, "Dispute "+ds.DisputeID+" upheld") || !strings.Contains(text(t, ctx, "#resolved + div"), ds.DisputeID) {
		t.Errorf("after upholding, the page shows %q", got)
	}

	badge := `form[action="/dashboard/operator/creators"]`
	run(t, ctx, "badge to a caller", chromedp.SetValue(badge+` input[name=wallet]`, wallet), chromedp.Submit(badge+" button"), appears(".error"))
	if e := text(t, ctx, ".error"); !strings.Contains(e, "listed no agent") {
		t.Errorf("a badge for a wallet that is no creator: %q", e)
	}
}
