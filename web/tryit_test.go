package web_test

import (
	"context"
	"crypto/ed25519"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// An agent page follows its run: while the agent works the page says so,
// with the seconds taken and the timeout, and shows the result once it
// ends, without a reload. A run still waiting for a dispatch slot can be
// cancelled from the page, refunded; one sent to the agent cannot.
func TestTryItFollowsTheRun(t *testing.T) {
	ctx := browser(t)
	// One dispatch slot: a second run waits while the first one works.
	d := market(t, func(c *daemon.Config) { c.MaxDispatches = 1 })
	release := make(chan struct{})
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
		if r.Task == "wait" {
			select {
			case <-release:
			case <-ctx.Done():
				return "", 0, ctx.Err()
			}
		}
		return "done: " + r.Task, 0, nil
	}, creator.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	cc, _ := newCreator(t, d.URL)
	str := func(s string) *string { return &s }
	endpoint, pub, price, tags := srv.URL+"/execute", h.PublicKey(), crtx.USDC(20_000), []string{"data"}
	a, err := cc.WithAgentKey(key).CreateListing(context.Background(), crtx.ListingParams{Name: str("Waiter"), Tagline: str("Waits."), Description: str("Waits."),
		Tags: &tags, InputSchema: rawJSON(`{"type":"object"}`), OutputSchema: rawJSON(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub})
	if err != nil {
		t.Fatal(err)
	}
	page := d.URL + "/agents/" + a.AgentID

	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/login"), appears("#generate-wallet"),
		chromedp.Click("#generate-wallet", chromedp.ByQuery), landed("/dashboard/"),
		chromedp.Navigate(page), appears(`form[action="/dashboard/airdrop"]`),
		chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("sent="), appears(`form[action$="/run"]`))

	// The first run works until released: the page says it runs, for how
	// long so far and against which timeout, with no way to cancel it.
	run(t, ctx, "a run the agent works on", chromedp.SetValue(`textarea[name=task]`, "wait", chromedp.ByQuery),
		chromedp.Click(`form[action$="/run"] button`), landed("run="), appears("#run [data-since]"))
	var first string
	run(t, ctx, "its address", chromedp.Evaluate(`location.href`, &first))
	if got := text(t, ctx, "#run"); !strings.Contains(got, "Running") || !strings.Contains(got, "of its 60 s timeout") || !strings.Contains(got, "runs to its end") {
		t.Errorf("a running run reads %q", got)
	}
	if n := count(t, ctx, `#run form[action$="/cancel"]`); n != 0 {
		t.Error("a run sent to the agent offers to cancel it")
	}
	screenshot(t, ctx, "agent-run-running")

	// The second waits for the slot the first holds: it can be cancelled,
	// and its price comes back.
	run(t, ctx, "a run that waits", chromedp.SetValue(`textarea[name=task]`, "second", chromedp.ByQuery),
		chromedp.Click(`form[action$="/run"] button`), landed("run="), appears(`#run form[action$="/cancel"]`))
	if got := text(t, ctx, "#run"); !strings.Contains(got, "Waiting for a free slot") {
		t.Errorf("a run waiting for a slot reads %q", got)
	}
	run(t, ctx, "cancel", chromedp.Click(`#run form[action$="/cancel"] button`, chromedp.ByQuery), landed("sent="), appears(".ok"))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Cancelled — 0.02 USDC refunded") {
		t.Errorf("a cancelled run says %q", got)
	}
	if got := text(t, ctx, "#run"); !strings.Contains(got, "failed — 0.02 USDC refunded") || !strings.Contains(got, "cancelled by the caller") {
		t.Errorf("the cancelled run reads %q", got)
	}

	// The first, released, ends on its page without a reload.
	run(t, ctx, "back to the first", chromedp.Navigate(first), appears("#run [data-since]"))
	close(release)
	run(t, ctx, "followed to its end", appears("#run [data-final]"))
	if got := text(t, ctx, "#run"); !strings.Contains(got, "done: wait") || !strings.Contains(got, "0.02 USDC charged") {
		t.Errorf("the first run, ended, reads %q", got)
	}
	// Of the airdropped 1 USDC, the run that ran cost 0.02; the cancelled
	// one nothing.
	run(t, ctx, "balance", chromedp.Navigate(d.URL+"/dashboard/"), appears(".stat"))
	if got := text(t, ctx, ".grid2"); !strings.Contains(got, "0.98 USDC") {
		t.Errorf("the devnet balance after a run and a cancelled one:\n%s", got)
	}
}
