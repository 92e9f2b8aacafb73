package web_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

// dashboard posts the creator dashboard's forms as a browser without
// JavaScript would, with the session cookie of one wallet.
type dashboard struct {
	t     *testing.T
	d     *daemon.Daemon
	token string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9A-Za-z.]+)"`)

// nonceField is the listing nonce a listing form was served with.
var nonceField = regexp.MustCompile(`name="listing_nonce" value="(lst_[0-9A-Za-z]+)"`)

// nonce is the listing nonce of page's listing form.
func (b dashboard) nonce(page string) string {
	return b.statementFields(page)["listing_nonce"]
}

// boundField is a hidden member of a listing form's statement that binds it
// to the marketplace and, in an edit form, to the key it replaces.
var boundField = regexp.MustCompile(`name="(marketplace|replaces)" value="([^"]+)"`)

// statementFields are the hidden members of the statement that page's
// listing form was served with: its nonce, marketplace and, in an edit
// form, the key transaction it replaces.
func (b dashboard) statementFields(page string) map[string]string {
	b.t.Helper()
	html := b.do("GET", page, nil)
	m := nonceField.FindStringSubmatch(html)
	if m == nil {
		b.t.Fatalf("%s has no listing nonce", page)
	}
	out := map[string]string{"listing_nonce": m[1]}
	for _, f := range boundField.FindAllStringSubmatch(html, -1) {
		out[f[1]] = f[2]
	}
	if out["marketplace"] == "" {
		b.t.Fatalf("%s names no marketplace", page)
	}
	return out
}

var shownError = regexp.MustCompile(`<div class="error" role="alert">([^<]*)</div>`)

func (b dashboard) do(method, path string, form url.Values) string {
	b.t.Helper()
	req, err := http.NewRequest(method, b.d.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "crtx_session", Value: b.token})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, body)
	}
	return string(body)
}

// post sends a form of the page at path, with that page's CSRF value, and
// returns the error the answer shows ("" for none) and the answer.
func (b dashboard) post(page, action string, form url.Values) (string, string) {
	b.t.Helper()
	m := csrfField.FindStringSubmatch(b.do("GET", page, nil))
	if m == nil {
		b.t.Fatalf("%s has no CSRF value", page)
	}
	form.Set("csrf", m[1])
	body := b.do("POST", action, form)
	if e := shownError.FindStringSubmatch(body); e != nil {
		return html.UnescapeString(e[1]), body
	}
	return "", body
}

// A listing form posted without JavaScript has no creator_signature: the
// page shows why it was refused, and what to sign, like any field error,
// with the form kept as typed. With the wallet's signature, as app.js adds
// it, the listing goes through; a change of key likewise.
func TestListingFormSignature(t *testing.T) {
	d := market(t)
	_, ck, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(ck.Public().(ed25519.PublicKey))
	ctx := context.Background()
	if _, err := client.New(d.URL, adminToken).Deposit(ctx, crtx.Mainnet, wallet, 100*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	cc, s, err := client.New(d.URL, "").SignIn(ctx, ck)
	if err != nil {
		t.Fatal(err)
	}
	b := dashboard{t, d, s.SessionToken}
	endpoint, pub := service(t)
	sf := b.statementFields("/dashboard/creator?tab=new")
	n, host := sf["listing_nonce"], sf["marketplace"]
	form := url.Values{"name": {" Greeter "}, "tagline": {"Greets."}, "description": {"Greets in French."}, "tags": {"writing"},
		"price_per_call_usdc": {"0.050"}, "endpoint_url": {endpoint}, "signing_public_key": {pub},
		"input_schema": {`{"type":"object"}`}, "output_schema": {`{"type":"string"}`}, "pricing_model": {"pay_per_use"},
		"creator_signature": {""}, "listing_nonce": {n}, "marketplace": {host}}
	// What app.js signs: the form's values as the marketplace reads them.
	statement, err := crtx.ListingStatement(crtx.TxAgentListed, map[string]string{"creator": wallet, "name": "Greeter",
		"price_per_call_usdc": "0.05", "signing_public_key": pub, "listing_nonce": n, "marketplace": host})
	if err != nil {
		t.Fatal(err)
	}

	problem, page := b.post("/dashboard/creator?tab=new", "/dashboard/creator/agents", form)
	if !strings.HasPrefix(problem, "creator_signature: is required") || !strings.Contains(problem, string(statement)) {
		t.Errorf("unsigned listing: error shown %q, want creator_signature and the statement %s", problem, statement)
	}
	if !strings.Contains(page, `name="tagline" value="Greets."`) {
		t.Error("the refused form is not shown as typed")
	}
	form.Set("creator_signature", crtx.SignBase58(ed25519.NewKeyFromSeed(make([]byte, 32)), statement))
	if problem, _ := b.post("/dashboard/creator?tab=new", "/dashboard/creator/agents", form); !strings.HasPrefix(problem, "creator_signature: does not verify") {
		t.Errorf("listing signed by another wallet: error shown %q", problem)
	}
	if mine, err := cc.CreatorAgents(ctx); err != nil || len(mine) != 0 {
		t.Fatalf("agents after refusals: %+v, %v", mine, err)
	}

	form.Set("creator_signature", crtx.SignBase58(ck, statement))
	if problem, _ := b.post("/dashboard/creator?tab=new", "/dashboard/creator/agents", form); !strings.HasPrefix(problem, "key_signature: is required") {
		t.Errorf("listing without the agent key's signature: error shown %q", problem)
	}
	form.Set("key_signature", crtx.SignBase58(agentKeyOf(pub), statement))
	if problem, page := b.post("/dashboard/creator?tab=new", "/dashboard/creator/agents", form); problem != "" || !strings.Contains(page, "Listed Greeter") {
		t.Fatalf("signed listing: error %q", problem)
	}
	mine, err := cc.CreatorAgents(ctx)
	if err != nil || len(mine) != 1 {
		t.Fatalf("agents = %+v, %v", mine, err)
	}
	id := mine[0].AgentID
	// The same form again: its nonce was used.
	if problem, _ := b.post("/dashboard/creator?tab=new", "/dashboard/creator/agents", form); !strings.HasPrefix(problem, "listing_nonce: ") {
		t.Errorf("a listing form sent again with its used nonce: error shown %q", problem)
	}

	// The edit form: a new key needs the signature, anything else not.
	edit := "/dashboard/creator/agents/" + id + "/edit"
	endpoint2, pub2 := service(t)
	change := url.Values{"tagline": {"Greets, politely."}, "description": {"Greets in French."}, "tags": {"writing"},
		"price_per_call_usdc": {"0.05"}, "endpoint_url": {endpoint}, "signing_public_key": {pub},
		"input_schema": {`{"type":"object"}`}, "output_schema": {`{"type":"string"}`}, "creator_signature": {""}}
	if problem, _ := b.post(edit, edit, change); problem != "" {
		t.Errorf("an edit that keeps the key: error %q", problem)
	}
	sf2 := b.statementFields(edit)
	n2, replaces := sf2["listing_nonce"], sf2["replaces"]
	if replaces == "" || replaces != mine[0].KeyTransaction {
		t.Errorf("the edit form replaces %q, want the listing's key transaction %q", replaces, mine[0].KeyTransaction)
	}
	change.Set("endpoint_url", endpoint2)
	change.Set("signing_public_key", pub2)
	change.Set("listing_nonce", n2)
	change.Set("marketplace", host)
	change.Set("replaces", replaces)
	problem, page = b.post(edit, edit, change)
	if !strings.HasPrefix(problem, "creator_signature: is required") || !strings.Contains(page, `value="`+pub2+`"`) {
		t.Errorf("unsigned key change: error shown %q", problem)
	}
	p := crtx.ListingParams{SigningPublicKey: &pub2, ListingNonce: &n2, Marketplace: &host, Replaces: &replaces}
	if err := client.SignListing(ck, &p, id); err != nil {
		t.Fatal(err)
	}
	if err := client.SignListingKey(agentKeyOf(pub2), wallet, &p, id); err != nil {
		t.Fatal(err)
	}
	change.Set("creator_signature", *p.CreatorSignature)
	change.Set("key_signature", *p.KeySignature)
	if problem, page := b.post(edit, edit, change); problem != "" || !strings.Contains(page, "Saved Greeter") {
		t.Fatalf("signed key change: error %q", problem)
	}
	if mine, err := cc.CreatorAgents(ctx); err != nil || mine[0].SigningPublicKey != pub2 || mine[0].Tagline != "Greets, politely." {
		t.Errorf("after the edits: %+v, %v", mine, err)
	}

	// The edit page is the creator's own, and only while the agent is listed.
	_, other, _ := ed25519.GenerateKey(nil)
	_, os, err := client.New(d.URL, "").SignIn(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	status := func(token string) int {
		req, _ := http.NewRequest("GET", d.URL+edit, nil)
		req.AddCookie(&http.Cookie{Name: "crtx_session", Value: token})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(os.SessionToken); got != 404 {
		t.Errorf("another wallet's edit page of the agent: %d, want 404", got)
	}
	if _, err := cc.Delist(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := status(s.SessionToken); got != 404 {
		t.Errorf("the edit page of a delisted agent: %d, want 404", got)
	}
}

// Reading the creator console spends no listing nonce: its tabs issue none,
// the listing form is served again with the one it was given while that
// is open, and a wallet that was issued too many through the API is still
// served every page, the form with a nonce it holds open.
func TestConsoleReadsSpendNoNonce(t *testing.T) {
	d := market(t)
	_, ck, _ := ed25519.GenerateKey(nil)
	cc, s, err := client.New(d.URL, "").SignIn(context.Background(), ck)
	if err != nil {
		t.Fatal(err)
	}
	b := dashboard{t, d, s.SessionToken}
	first := b.nonce("/dashboard/creator?tab=new")
	for i := 0; i < 30; i++ {
		for _, tab := range []string{"", "listings", "test", "receipts", "disputes"} {
			if page := b.do("GET", "/dashboard/creator?tab="+tab, nil); nonceField.MatchString(page) {
				t.Fatalf("the %q tab carries a listing nonce", tab)
			}
		}
		if again := b.nonce("/dashboard/creator?tab=new"); again != first {
			t.Fatalf("load %d of the listing form has nonce %s, not the open %s", i, again, first)
		}
	}
	// Past the API's allowance: the form is served, with a nonce the
	// wallet holds open.
	for i := 0; ; i++ {
		if _, err := cc.ListingNonce(context.Background()); err != nil {
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Code != crtx.CodeRateLimited {
				t.Fatalf("nonce %d: %v", i, err)
			}
			break
		}
	}
	if page := b.do("GET", "/dashboard/creator?tab=new", nil); !nonceField.MatchString(page) {
		t.Error("the listing form has no open nonce once the wallet's allowance ran out")
	}
}
