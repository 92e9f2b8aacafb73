package agents

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

// started runs a marketplace with an admin token and the text-statistics
// example agent, both on 127.0.0.1, until the test ends, and returns them;
// the agent must then stop cleanly.
func started(t *testing.T) (context.Context, *daemon.Daemon, endpoint) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), true, io.Discard
	cfg.AdminTokenFile = cfg.Data + "/admin"
	cfg.OperatorHints = true // as crtxd dev, whose caller is its operator
	if err := writeFile(cfg.AdminTokenFile, "admin-token-0123456789abcdef0123"); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	_, key, _ := ed25519.GenerateKey(nil)
	return ctx, d, runAgent(t, ctx, key, d.URL, nil)
}

// runAgent runs the textstats agent with key, checking marketplace's
// signatures, for agentIDs, until the test ends.
func runAgent(t *testing.T, ctx context.Context, key ed25519.PrivateKey, marketplace string, agentIDs []string) endpoint {
	t.Helper()
	ctx, stop := context.WithCancel(ctx)
	ready := make(chan endpoint, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, "127.0.0.1:0", key, marketplace, agentIDs, TextStats, func(url, pub string) { ready <- endpoint{url, pub, key} })
	}()
	select {
	case ep := <-ready:
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("the agent did not stop cleanly: %v", err)
			}
		})
		return ep
	case err := <-done:
		stop()
		t.Fatal(err)
	}
	panic("unreachable")
}

// endpoint is where an example agent listens and the key it signs with.
type endpoint struct {
	url, pub string
	key      ed25519.PrivateKey
}

// The example runs as a real service, checks the marketplace's signatures,
// and passes the listing flow.
func TestListsOnAMarketplace(t *testing.T) {
	ctx, d, ep := started(t)

	_, wkey, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(wkey.Public().(ed25519.PublicKey))
	if _, err := client.New(d.URL, "admin-token-0123456789abcdef0123").Deposit(ctx, crtx.Mainnet, wallet, 10*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	c, _, err := client.New(d.URL, "").SignIn(ctx, wkey)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price := crtx.USDC(20_000)
	tags := []string{"writing", "data"}
	a, err := c.WithAgentKey(ep.key).CreateListing(ctx, crtx.ListingParams{Name: str("Text statistics"), Tagline: str("Counts words and sentences."),
		Description: str("Words, sentences, lines, reading time and frequent words of a text."), Tags: &tags,
		InputSchema: raw(TextStatsInput), OutputSchema: raw(`{"type":"object"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &ep.url, SigningPublicKey: &ep.pub})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "active" || a.Collateral != 10*crtx.MicroPerUSDC {
		t.Errorf("listing = %+v", a)
	}

	// Run again with --agent-id: the service answers its own agent's
	// requests (a new endpoint is tested again, for the agent) and
	// refuses another agent's.
	mine := runAgent(t, ctx, ep.key, d.URL, []string{a.AgentID})
	if _, err := c.UpdateListing(ctx, a.AgentID, crtx.ListingParams{EndpointURL: &mine.url}); err != nil {
		t.Fatalf("moving to a service for this agent: %v", err)
	}
	theirs := runAgent(t, ctx, ep.key, d.URL, []string{"agt_someoneelse0000"})
	_, err = c.UpdateListing(ctx, a.AgentID, crtx.ListingParams{EndpointURL: &theirs.url})
	if client.Code(err) != crtx.CodeEndpointUnreachable || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("moving to a service for another agent: %v", err)
	}
}

// examples/textstats/listing.json, the README's sample, lists the textstats
// agent as it is, once its two placeholders are replaced: a creator without
// mainnet funds is first told how much collateral is missing and the
// command that deposits it, and that deposit is enough.
func TestSampleListing(t *testing.T) {
	ctx, d, ep := started(t)

	raw, err := os.ReadFile("../textstats/listing.json")
	if err != nil {
		t.Fatal(err)
	}
	// Every field a listing takes is there (status is for changes only;
	// the nonce, the marketplace, the key replaced and the signatures are
	// made by whoever lists it, crtx creator create or the SDK, from the
	// marketplace's answers, the wallet key and the agent's; a metered
	// listing's prices are a metered listing's only), and nothing else.
	made := map[string]bool{"status": true, "creator_signature": true, "key_signature": true, "listing_nonce": true,
		"marketplace": true, "replaces": true, "price_per_1k_tokens_usdc": true, "max_price_per_call_usdc": true}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[crtx.ListingParams]()) {
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if _, ok := fields[name]; !ok && !made[name] {
			t.Errorf("listing.json lacks %s", name)
		}
	}
	var p crtx.ListingParams
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if *p.EndpointURL != "http://127.0.0.1:9101/execute" || *p.SigningPublicKey != "YOUR_SIGNING_PUBLIC_KEY" {
		t.Fatalf("the placeholders the README names changed: %s, %s", *p.EndpointURL, *p.SigningPublicKey)
	}
	if c := crtx.CollateralFor(crtx.DefaultCollateralTiers, *p.Price); c != 10*crtx.MicroPerUSDC {
		t.Errorf("the price %s needs %s USDC of collateral, not the 10 USDC crtxd dev funds", *p.Price, c)
	}
	// The schemas are the agent's own.
	for got, want := range map[string]string{string(*p.InputSchema): TextStatsInput, string(*p.OutputSchema): TextStatsOutput} {
		var g, w any
		if err := errors.Join(json.Unmarshal([]byte(got), &g), json.Unmarshal([]byte(want), &w)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("listing.json schema %s, the agent's %s", got, want)
		}
	}
	p.EndpointURL, p.SigningPublicKey = &ep.url, &ep.pub

	_, wkey, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(wkey.Public().(ed25519.PublicKey))
	c, _, err := client.New(d.URL, "").SignIn(ctx, wkey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WithAgentKey(ep.key).CreateListing(ctx, p)
	if client.Code(err) != crtx.CodeInsufficientBalance {
		t.Fatalf("listing without mainnet funds: %v", err)
	}
	// The refusal names the collateral and the operator's command that
	// credits it where this marketplace runs: run as printed, it does.
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatal(err)
	}
	_, command, ok := strings.Cut(ce.Message, "the marketplace's operator credits the 10 USDC missing: ")
	if !strings.Contains(err.Error(), "needs 10 USDC of collateral") || !ok || !strings.HasPrefix(command, "curl ") {
		t.Fatalf("the refusal does not name the collateral and the operator's command: %v", err)
	}
	if out, err := exec.Command("sh", "-c", command).CombinedOutput(); err != nil || !strings.Contains(string(out), wallet) {
		t.Fatalf("%s: %v\n%s", command, err, out)
	}
	a, err := c.WithAgentKey(ep.key).CreateListing(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "active" || a.Collateral != 10*crtx.MicroPerUSDC || a.Name != "Text statistics" {
		t.Errorf("listing = %+v", a)
	}
}
