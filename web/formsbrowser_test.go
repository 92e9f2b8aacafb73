package web_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// In the browser: a failed token paste keeps where sign-in was going; a
// bad key file is explained in words; a double click on Airdrop credits
// once; Back and Forward after making a key send nothing again and show
// its secret no more; Revoke asks first, and does nothing when declined.
func TestFormsInTheBrowser(t *testing.T) {
	ctx := browser(t)
	d := market(t)
	answer := true // how the next confirmation dialog is answered
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(answer))
		}
	})

	run(t, ctx, "bad token", chromedp.Navigate(d.URL+"/login?next=/dashboard/keys"), appears(`input[name=token]`),
		chromedp.SetValue(`input[name=token]`, "crtx_sess_notatoken"), chromedp.Submit(`input[name=token]`), appears(".error"))
	var next string
	run(t, ctx, "next", chromedp.Value(`input[name=next]`, &next, chromedp.ByQuery))
	if next != "/dashboard/keys" || !strings.Contains(text(t, ctx, ".error"), "not a valid session token") {
		t.Errorf("after a bad token: next %q, error %q", next, text(t, ctx, ".error"))
	}
	for paste, want := range map[string]string{"[1, 2,": "paste the whole file", "[1,2,3]": "this holds 3",
		"[" + strings.Repeat("7,", 63) + "7]": "does not belong"} {
		run(t, ctx, "import "+paste, chromedp.Evaluate(`document.querySelector("details").open = true`, nil),
			chromedp.SetValue("#import-key", paste, chromedp.ByQuery), chromedp.Click("#import-wallet", chromedp.ByQuery),
			appears("#login-status.error"))
		if got := text(t, ctx, "#login-status"); !strings.HasPrefix(got, "That is not a usable key file") || !strings.Contains(got, want) {
			t.Errorf("key file %q: %q, want %q", paste, got, want)
		}
	}
	run(t, ctx, "sign in", chromedp.Click("#generate-wallet", chromedp.ByQuery), appears(`form[action="/dashboard/keys"]`))
	var at string
	run(t, ctx, "where", chromedp.Location(&at))
	if !strings.HasSuffix(at, "/dashboard/keys") {
		t.Errorf("signed in at %s, want the page sign-in was asked for", at)
	}
	var token string
	run(t, ctx, "session", chromedp.ActionFunc(func(ctx context.Context) error { token = cookie(t, ctx, "crtx_session"); return nil }))
	cc := client.New(d.URL, token)

	run(t, ctx, "double click", chromedp.Navigate(d.URL+"/dashboard/"), appears(`form[action="/dashboard/airdrop"]`),
		chromedp.SetValue(`input[name=amount]`, "7"), chromedp.DoubleClick(`form[action="/dashboard/airdrop"] button`), appears(".ok"))
	if w, err := cc.Wallet(context.Background()); err != nil || w.Balances[crtx.Devnet].Available != 7*crtx.MicroPerUSDC {
		t.Errorf("a double click on Airdrop: %+v, %v; want 7 USDC", w.Balances, err)
	}

	run(t, ctx, "make a key", chromedp.Navigate(d.URL+"/dashboard/keys"), appears(`input[name=name]`),
		chromedp.SetValue(`input[name=name]`, "ci"), chromedp.Click(`form[action="/dashboard/keys"] button`), appears("#new-key"))
	// Chromium may restore either page from its back-forward cache rather
	// than load it: the page itself must then drop the secret.
	// chromedp's own queries lose the page after such a restore; the
	// page's default context answers runtime.Evaluate still.
	count := func(sel string) int {
		var n int
		run(t, ctx, "count "+sel, chromedp.ActionFunc(func(ctx context.Context) error {
			res, exc, err := runtime.Evaluate(`document.querySelectorAll(` + strconv.Quote(sel) + `).length`).Do(ctx)
			if err == nil && exc != nil {
				err = exc
			}
			if err == nil {
				err = json.Unmarshal(res.Value, &n)
			}
			return err
		}))
		return n
	}
	for _, step := range []string{"back", "forward"} {
		// Scheduled, not called: a navigation that starts while the
		// evaluation is answered makes the evaluation fail ("Inspected
		// target navigated or closed").
		run(t, ctx, step, chromedp.ActionFunc(func(ctx context.Context) error {
			_, _, err := runtime.Evaluate(`setTimeout(() => history.` + step + `(), 0)`).Do(ctx)
			return err
		}), chromedp.Sleep(time.Second))
		if secret, shown := count("#new-key"), count("form[action$='/revoke']"); secret != 0 || shown != 1 {
			t.Errorf("after %s: the secret shown %d times, %d keys listed", step, secret, shown)
		}
	}
	if keys, err := cc.Keys(context.Background()); err != nil || len(keys) != 1 {
		t.Fatalf("keys after Back and Forward: %d, %v", len(keys), err)
	}

	// The mainnet webhook secret the keys page shows is the API's (a
	// session reads mainnet's by default), and its Rotate button replaces
	// it, the old one named as still signing; devnet's is another.
	// Each is hidden until asked for.
	var hidden bool
	run(t, ctx, "webhook secret", chromedp.Navigate(d.URL+"/dashboard/keys"), appears("#webhook-mainnet > summary"),
		chromedp.Evaluate(`document.getElementById("webhook-secret-mainnet").checkVisibility() || document.getElementById("webhook-secret-devnet").checkVisibility()`, &hidden))
	if hidden {
		t.Error("a webhook secret shows before it is asked for")
	}
	run(t, ctx, "show it", chromedp.Click("#webhook-mainnet > summary", chromedp.ByQuery), appears("#webhook-secret-mainnet"))
	shown := strings.TrimSpace(text(t, ctx, "#webhook-secret-mainnet"))
	if api, err := cc.WebhookSecret(context.Background()); err != nil || api != shown || !strings.HasPrefix(shown, "whsec_") {
		t.Errorf("webhook secret shown %q, the API's %q (%v)", shown, api, err)
	}
	run(t, ctx, "rotate", chromedp.Navigate(d.URL+"/dashboard/keys"), appears("#webhook-mainnet > summary"),
		chromedp.Click(`form[action="/dashboard/keys/webhook-secret"]:has(input[value=mainnet]) button`), appears(".ok"),
		chromedp.Click("#webhook-mainnet > summary", chromedp.ByQuery), chromedp.Click("#webhook-devnet > summary", chromedp.ByQuery))
	rotated := strings.TrimSpace(text(t, ctx, "#webhook-secret-mainnet"))
	if api, err := cc.WebhookSecret(context.Background()); err != nil || api != rotated || rotated == shown ||
		!strings.Contains(text(t, ctx, ".ok"), "rotated") || !strings.Contains(text(t, ctx, "body > main"), "The previous secret signs deliveries too until") {
		t.Errorf("after Rotate: shown %q (was %q), the API's %q (%v)", rotated, shown, api, err)
	}
	if devnet := strings.TrimSpace(text(t, ctx, "#webhook-secret-devnet")); devnet == rotated || devnet == shown || !strings.HasPrefix(devnet, "whsec_") {
		t.Errorf("the devnet secret shown: %q", devnet)
	}
	answer = false
	run(t, ctx, "revoke, declined", chromedp.Navigate(d.URL+"/dashboard/keys"), appears(`form[action$="/revoke"]`),
		chromedp.Click(`form[action$="/revoke"] button`), chromedp.Sleep(300*time.Millisecond),
		chromedp.Navigate(d.URL+"/dashboard/keys"), appears(`form[action$="/revoke"]`))
	if keys, err := cc.Keys(context.Background()); err != nil || keys[0].RevokedAt != nil {
		t.Fatalf("a declined Revoke revoked the key: %+v, %v", keys, err)
	}
	answer = true
	run(t, ctx, "revoke", chromedp.Click(`form[action$="/revoke"] button`), appears(".ok"))
	if got := text(t, ctx, ".ok"); !strings.Contains(got, "Key ci revoked") {
		t.Errorf("revoke: %q", got)
	}
	if keys, err := cc.Keys(context.Background()); err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Errorf("the key after Revoke: %+v, %v", keys, err)
	}
}
