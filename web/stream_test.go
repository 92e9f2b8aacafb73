package web_test

import (
	"context"
	"crypto/ed25519"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
)

// Try it shows a streaming agent's words as it writes them: its first
// piece is on the page while the run still runs, and the run ends with the
// whole result.
func TestTryItShowsWordsAsTheyCome(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	cc, _ := newCreator(t, d.URL)
	_, key, _ := ed25519.GenerateKey(nil)
	more := make(chan struct{})
	h := creator.NewStreamHandler(key, func(ctx context.Context, r creator.Request, yield func(string)) (int, error) {
		yield("Bon")
		if !r.Test {
			select {
			case <-more:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		yield("jour")
		return 0, nil
	}, creator.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	str := func(s string) *string { return &s }
	endpoint, pub, price, tags := srv.URL+"/execute", h.PublicKey(), crtx.USDC(10_000), []string{"writing"}
	a, err := cc.WithAgentKey(key).CreateListing(context.Background(), crtx.ListingParams{Name: str("Greeter"), Tagline: str("Greets."),
		Description: str("Greets, word by word."), Tags: &tags, InputSchema: rawJSON(`{"type":"object"}`), OutputSchema: rawJSON(`{"type":"string"}`),
		PricingModel: str("pay_per_use"), Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub})
	if err != nil {
		t.Fatal(err)
	}
	id := a.AgentID
	run(t, ctx, "sign in", chromedp.Navigate(d.URL+"/agents/"+id), appears(`#try a[href^="/login?next="]`),
		chromedp.Click(`#try a[href^="/login?next="]`, chromedp.ByQuery), landed("/login"), appears("#generate-wallet"))
	run(t, ctx, "signed in", chromedp.Click("#generate-wallet", chromedp.ByQuery), landed("/agents/"+id+"#try"),
		appears(`form[action="/dashboard/airdrop"]`))
	run(t, ctx, "airdrop", chromedp.Submit(`form[action="/dashboard/airdrop"] button`), landed("/agents/"+id), appears(`form[action$="/run"]`))
	run(t, ctx, "run", chromedp.SetValue(`textarea[name=task]`, "Ada", chromedp.ByQuery), chromedp.Click(`form[action$="/run"] button`), landed("run="),
		chromedp.Poll(`document.querySelector("#pieces")?.textContent === "Bon"`, nil, chromedp.WithPollingTimeout(time.Minute)))
	if n := count(t, ctx, "#run [data-final]"); n != 0 {
		t.Fatal("the run had ended when its first word showed")
	}
	close(more)
	run(t, ctx, "ended", appears("#run [data-final]"))
	if got := text(t, ctx, "#result"); strings.TrimSpace(got) != "Bonjour" {
		t.Errorf("the run's result: %q", got)
	}
}
