package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

// browserLike sends requests as a browser of one wallet does: with its
// session cookie and any cookie the answers set, following no redirect.
type browserLike struct {
	t       *testing.T
	base    string
	cookies map[string]string
	mu      sync.Mutex
}

func (b *browserLike) send(method, path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	return b.sendBody(method, path, "application/x-www-form-urlencoded", form.Encode())
}

// sendBody is send with a body and content type of the caller's making.
func (b *browserLike) sendBody(method, path, contentType, body string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	b.mu.Lock()
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	b.mu.Unlock()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	b.mu.Lock()
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	b.mu.Unlock()
	return resp, string(answer)
}

// token is a new form token of the page at path.
func (b *browserLike) token(path string) string {
	b.t.Helper()
	_, body := b.send("GET", path, nil)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("%s has no form token", path)
	}
	return m[1]
}

// twice sends a form twice at once, as a double click does, and once more
// after, as Back and send again does; it returns where each answer sent
// the browser.
func (b *browserLike) twice(action string, form url.Values) []string {
	b.t.Helper()
	where := make([]string, 3)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			resp, _ := b.send("POST", action, form)
			where[i] = resp.Header.Get("Location")
		})
	}
	wg.Wait()
	resp, _ := b.send("POST", action, form)
	where[2] = resp.Header.Get("Location")
	return where
}

// signedIn is a new wallet signed in: its key, its REST client, and a
// browser holding its session.
func signedIn(t *testing.T, d *daemon.Daemon) (ed25519.PrivateKey, *client.Client, *browserLike) {
	t.Helper()
	_, ck, _ := ed25519.GenerateKey(nil)
	cc, s, err := client.New(d.URL, "").SignIn(context.Background(), ck)
	if err != nil {
		t.Fatal(err)
	}
	return ck, cc, &browserLike{t: t, base: d.URL, cookies: map[string]string{"crtx_session": s.SessionToken}}
}

// ahead is a marketplace whose clock runs the returned duration ahead of
// the real one.
func ahead(t *testing.T) (*daemon.Daemon, *atomic.Int64) {
	var by atomic.Int64
	return market(t, func(c *daemon.Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(by.Load())) }
	}), &by
}

// A form acts once: a double click, Back and send again, or a reload of
// the page it lands on repeat nothing; every answer lands on the page of
// the first sending's outcome. A created key's secret is shown once.
func TestFormsActOnce(t *testing.T) {
	d := market(t)
	ctx := context.Background()
	ck, cc, b := signedIn(t, d)
	wallet := crtx.Address(ck.Public().(ed25519.PublicKey))
	same := func(what string, where []string) string {
		t.Helper()
		for _, w := range where {
			if w != where[0] || !strings.Contains(w, "sent=") {
				t.Fatalf("%s sent three times landed on %q", what, where)
			}
		}
		return where[0]
	}

	// The airdrop.
	landing := same("airdrop", b.twice("/dashboard/airdrop", url.Values{"csrf": {b.token("/dashboard/")}, "amount": {"5"}}))
	for range 2 { // the landing page, and its reload
		if _, body := b.send("GET", landing, nil); !strings.Contains(body, "5 USDC airdropped on devnet") {
			t.Errorf("the airdrop's page does not say it was made")
		}
	}
	if wr, err := cc.Wallet(ctx); err != nil || wr.Balances[crtx.Devnet].Available != 5*crtx.MicroPerUSDC {
		t.Errorf("after one airdrop sent three times: %+v, %v; want 5 USDC", wr.Balances, err)
	}

	// A key: made once, its secret shown on the first landing only.
	landing = same("key", b.twice("/dashboard/keys", url.Values{"csrf": {b.token("/dashboard/keys")}, "name": {"ci"}, "environment": {"devnet"}}))
	_, first := b.send("GET", landing, nil)
	_, again := b.send("GET", landing, nil)
	if !strings.Contains(first, `id="new-key">crtx_test_`) || !strings.Contains(first, "Key ci created") {
		t.Error("the key's page does not show its secret")
	}
	if strings.Contains(again, `id="new-key"`) || !strings.Contains(again, "Key ci created") || !strings.Contains(again, "Its secret was shown once") {
		t.Error("a reload of the key's page shows the secret again, or forgets the key was made")
	}
	if keys, err := cc.Keys(ctx); err != nil || len(keys) != 1 {
		t.Errorf("keys after one form sent three times: %d, %v", len(keys), err)
	}

	// A listing: listed once, collateral locked once.
	if _, err := client.New(d.URL, adminToken).Deposit(ctx, crtx.Mainnet, wallet, 100*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	endpoint, pub := service(t)
	_, page := b.send("GET", "/dashboard/creator?tab=new", nil)
	nm, hm := nonceField.FindStringSubmatch(page), boundField.FindStringSubmatch(page)
	if nm == nil || hm == nil || hm[1] != "marketplace" {
		t.Fatal("the creator page has no listing nonce or marketplace")
	}
	statement, err := crtx.ListingStatement(crtx.TxAgentListed, map[string]string{"creator": wallet, "name": "Greeter",
		"price_per_call_usdc": "0.05", "signing_public_key": pub, "listing_nonce": nm[1], "marketplace": hm[2]})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"csrf": {b.token("/dashboard/creator")}, "name": {"Greeter"}, "tagline": {"Greets."}, "description": {"Greets."},
		"tags": {"writing"}, "price_per_call_usdc": {"0.05"}, "endpoint_url": {endpoint}, "signing_public_key": {pub},
		"input_schema": {`{"type":"object"}`}, "output_schema": {`{"type":"string"}`}, "pricing_model": {"pay_per_use"},
		"creator_signature": {crtx.SignBase58(ck, statement)}, "key_signature": {crtx.SignBase58(agentKeyOf(pub), statement)}, "listing_nonce": {nm[1]}, "marketplace": {hm[2]}}
	landing = same("listing", b.twice("/dashboard/creator/agents", form))
	if _, body := b.send("GET", landing, nil); !strings.Contains(body, "Listed Greeter") {
		t.Error("the listing's page does not say it was listed")
	}
	mine, err := cc.CreatorAgents(ctx)
	if err != nil || len(mine) != 1 {
		t.Fatalf("listings after one form sent three times: %d, %v", len(mine), err)
	}
	if wr, err := cc.Wallet(ctx); err != nil || wr.Balances[crtx.Mainnet].Available != 90*crtx.MicroPerUSDC {
		t.Errorf("mainnet after one listing: %+v, %v; want 10 USDC of collateral locked once", wr.Balances, err)
	}

	// A form of another session is refused, with nothing done.
	_, other, _ := ed25519.GenerateKey(nil)
	_, s2, err := client.New(d.URL, "").SignIn(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	foreign := (&browserLike{t: t, base: d.URL, cookies: map[string]string{"crtx_session": s2.SessionToken}}).token("/dashboard/")
	resp, body := b.send("POST", "/dashboard/airdrop", url.Values{"csrf": {foreign}, "amount": {"5"}})
	if resp.StatusCode < 400 || !strings.Contains(body, "<html") {
		t.Errorf("a form of another session: %d, want a refusal on a page", resp.StatusCode)
	}
	// Nor is a form of another session of the same wallet: the token is
	// bound to the session it was served in.
	_, s3, err := client.New(d.URL, "").SignIn(ctx, ck)
	if err != nil {
		t.Fatal(err)
	}
	twin := &browserLike{t: t, base: d.URL, cookies: map[string]string{"crtx_session": s3.SessionToken}}
	if resp, _ := twin.send("POST", "/dashboard/airdrop", url.Values{"csrf": {b.token("/dashboard/")}, "amount": {"5"}}); resp.StatusCode != 403 {
		t.Errorf("a form of the wallet's other session: %d, want 403", resp.StatusCode)
	}
	if wr, err := cc.Wallet(ctx); err != nil || wr.Balances[crtx.Devnet].Available != 5*crtx.MicroPerUSDC {
		t.Errorf("a refused form moved money: %+v, %v", wr.Balances, err)
	}
}

// A form's token is dated by the market's clock: sent 13 hours after the
// page was served, by that clock, it is refused and acts on nothing, while
// the wallet's session (24 hours) still holds.
func TestFormsExpireByTheMarketClock(t *testing.T) {
	d, clock := ahead(t)
	ctx := context.Background()
	_, cc, b := signedIn(t, d)
	token := b.token("/dashboard/")
	clock.Store(int64(13 * time.Hour))
	if resp, body := b.send("POST", "/dashboard/airdrop", url.Values{"csrf": {token}, "amount": {"5"}}); resp.StatusCode != 403 || !strings.Contains(body, "more than 12 hours ago") {
		t.Errorf("a form served 13 hours ago by the market's clock: %d", resp.StatusCode)
	}
	if landing := b.twice("/dashboard/airdrop", url.Values{"csrf": {b.token("/dashboard/")}, "amount": {"5"}}); !strings.Contains(landing[0], "sent=") {
		t.Errorf("a form served now, by the same clock: landed on %q", landing[0])
	}
	if wr, err := cc.Wallet(ctx); err != nil || wr.Balances[crtx.Devnet].Available != 5*crtx.MicroPerUSDC {
		t.Errorf("after a stale form and a fresh one: %+v, %v; want 5 USDC", wr.Balances, err)
	}
}

// A form whose action was cut off (the marketplace stopped while it ran)
// has no outcome: its page says it is being done while it may still be,
// and once no action could still run, that how it ended was not recorded.
func TestFormCutOff(t *testing.T) {
	d, clock := ahead(t)
	ck, _, b := signedIn(t, d)
	nonce := strings.Split(b.token("/dashboard/"), ".")[1]
	if first, err := d.Market.Accounts.ClaimForm(context.Background(), crtx.Address(ck.Public().(ed25519.PublicKey)), nonce); !first || err != nil {
		t.Fatalf("claim: %v, %v", first, err)
	}
	if _, body := b.send("GET", "/dashboard/?sent="+nonce, nil); !strings.Contains(body, "still being done") {
		t.Error("a form at work does not say so")
	}
	clock.Store(int64(11 * time.Minute))
	_, body := b.send("GET", "/dashboard/?sent="+nonce, nil)
	if e := shownError.FindStringSubmatch(body); e == nil || !strings.Contains(e[1], "how it ended was not recorded") {
		t.Error("a form cut off 11 minutes ago still says it is being done")
	}
}

// A price in a higher tier takes more collateral: the edit form says how
// much and changes nothing until the creator ticks the box for that amount;
// the marketplace locks no more than was confirmed.
func TestMoreCollateralIsConfirmed(t *testing.T) {
	d := market(t)
	ctx := context.Background()
	id, session := greeterOf(t, d)
	cc := client.New(d.URL, session)
	mine, err := cc.CreatorAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	price, endpoint, pub := mine[0].Price, mine[0].EndpointURL, mine[0].SigningPublicKey
	b := &browserLike{t: t, base: d.URL, cookies: map[string]string{"crtx_session": session}}
	edit := "/dashboard/creator/agents/" + id + "/edit"
	form := url.Values{"tagline": {"Greets."}, "description": {"Greets."}, "tags": {"writing"}, "price_per_call_usdc": {"0.5"}, "endpoint_url": {endpoint},
		"signing_public_key": {pub}, "input_schema": {`{"type":"object"}`}, "output_schema": {`{"type":"string"}`}, "timeout_seconds": {"60"}}
	form.Set("csrf", b.token(edit))
	resp, _ := b.send("POST", edit, form)
	_, page := b.send("GET", resp.Header.Get("Location"), nil)
	if !strings.Contains(page, "locks 40 USDC more collateral") || !strings.Contains(page, `name="more_collateral" value="40"`) {
		t.Fatalf("an unconfirmed price rise does not ask for 40 USDC: %s", shownError.FindString(page))
	}
	if mine, _ := cc.CreatorAgents(ctx); mine[0].Price != price || mine[0].Collateral != 10*crtx.MicroPerUSDC {
		t.Fatalf("an unconfirmed price rise changed the listing: %+v", mine[0])
	}
	// A confirmation of less than the rise locks (a page shown before a
	// slash, say) is asked again for the amount it takes now.
	form.Set("csrf", b.token(edit))
	form.Set("more_collateral", "30")
	resp, _ = b.send("POST", edit, form)
	if _, page := b.send("GET", resp.Header.Get("Location"), nil); !strings.Contains(page, `name="more_collateral" value="40"`) {
		t.Fatalf("a confirmation of 30 USDC for a 40 USDC rise: %s", shownError.FindString(page))
	}
	form.Set("csrf", b.token(edit))
	form.Set("more_collateral", "40")
	resp, _ = b.send("POST", edit, form)
	if _, page := b.send("GET", resp.Header.Get("Location"), nil); !strings.Contains(page, "Saved Greeter") {
		t.Errorf("a confirmed price rise: %s", shownError.FindString(page))
	}
	if mine, _ := cc.CreatorAgents(ctx); mine[0].Price != 500_000 || mine[0].Collateral != 50*crtx.MicroPerUSDC {
		t.Errorf("after the confirmed rise: price %v, collateral %v", mine[0].Price, mine[0].Collateral)
	}
}

func rawJSON(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
