package agents

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

// The example runs as a real service, checks the marketplace's signatures,
// and passes the listing flow.
func TestListsOnAMarketplace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), true, io.Discard
	tokenFile := cfg.Data + "/admin"
	if err := writeFile(tokenFile, "admin-token-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	cfg.AdminTokenFile = tokenFile
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	_, key, _ := ed25519.GenerateKey(nil)
	type endpoint struct{ url, pub string }
	ready := make(chan endpoint, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, "127.0.0.1:0", key, d.URL, TextStats, func(url, pub string) { ready <- endpoint{url, pub} })
	}()
	var ep endpoint
	select {
	case ep = <-ready:
	case err := <-done:
		t.Fatal(err)
	}

	_, wkey, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(wkey.Public().(ed25519.PublicKey))
	if _, err := client.New(d.URL, "admin-token-0123456789abcdef").Deposit(ctx, crtx.Mainnet, wallet, 10*crtx.MicroPerUSDC); err != nil {
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
	a, err := c.CreateListing(ctx, crtx.ListingParams{Name: str("Text statistics"), Tagline: str("Counts words and sentences."),
		Description: str("Words, sentences, lines, reading time and frequent words of a text."), Tags: &tags,
		InputSchema: raw(TextStatsInput), OutputSchema: raw(`{"type":"object"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &ep.url, SigningPublicKey: &ep.pub})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "active" || a.Collateral != 10*crtx.MicroPerUSDC {
		t.Errorf("listing = %+v", a)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the agent did not stop cleanly: %v", err)
	}
}
