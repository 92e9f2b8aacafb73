// Package markettest sets up what a protocol's own tests call: a market on
// a fresh SQLite store, its handler served at the market's public URL, one
// agent listed behind a creator's service that signs real results, and a
// devnet wallet with money and an API key to pay for it. Test code only.
package markettest

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/dispatch"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
)

// Price is what one call of the agent costs: 0.25 USDC.
const Price crtx.USDC = crtx.MicroPerUSDC / 4

// Funds is what the caller's devnet wallet starts with: 10 USDC.
const Funds crtx.USDC = 10 * crtx.MicroPerUSDC

// Result is what the agent answers a task with.
func Result(task string) string { return "Bonjour, " + task }

// Market is a served market with one agent and one paying caller.
type Market struct {
	*market.Market
	// URL is where the handler is served: the market's public URL.
	URL string
	// Agent is the listed agent's id; Wallet and Key are the caller's
	// devnet wallet and its API key.
	Agent, Wallet, Key string
}

// New serves the handler serve makes of a new market, on 127.0.0.1.
func New(t *testing.T, serve func(*market.Market, *gate.Gate) http.Handler) *Market {
	t.Helper()
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(nil)
	url := "http://" + srv.Listener.Addr().String()
	_, authority, _ := ed25519.GenerateKey(nil)
	_, signer, _ := ed25519.GenerateKey(nil)
	m, err := market.New(testdb.SQLite(t), market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: url, Authority: authority, Signer: signer,
		Caller: dispatch.New(dispatch.Options{Signer: signer, AllowPrivate: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	srv.Config.Handler = serve(m, gate.New(m, gate.Limits{}, nil))
	srv.Start()
	t.Cleanup(srv.Close)

	_, wallet, _ := ed25519.GenerateKey(nil)
	caller := crtx.Address(wallet.Public().(ed25519.PublicKey))
	if _, err := m.Funds.OperatorDeposit(ctx, crtx.Devnet, caller, Funds); err != nil {
		t.Fatal(err)
	}
	_, key, err := m.Accounts.CreateKey(ctx, caller, "test", crtx.Devnet, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Market{Market: m, URL: url, Agent: list(t, m, signer.Public().(ed25519.PublicKey)), Wallet: caller, Key: key}
}

// list lists an agent as a creator's client does (a listing nonce, the
// statement signed by the wallet and by the agent's key), behind a service
// that checks the marketplace's signature on each request; it returns the
// agent's id.
func list(t *testing.T, m *market.Market, marketKey ed25519.PublicKey) string {
	t.Helper()
	ctx := context.Background()
	_, agentKey, _ := ed25519.GenerateKey(nil)
	svc := creator.NewHandler(agentKey, func(_ context.Context, r creator.Request) (string, int, error) {
		return Result(r.Task), 0, nil
	}, creator.Options{MarketplaceKey: marketKey})
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)

	_, wallet, _ := ed25519.GenerateKey(nil)
	creatorW := crtx.Address(wallet.Public().(ed25519.PublicKey))
	// The listing's collateral is locked from mainnet funds.
	if _, err := m.Funds.OperatorDeposit(ctx, crtx.Mainnet, creatorW, 100*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	n, err := m.Listings.ListingNonce(ctx, creatorW)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	price, tags, pub := Price, []string{"writing"}, svc.PublicKey()
	in, out := json.RawMessage(`{"type":"object"}`), json.RawMessage(`{"type":"string"}`)
	p := crtx.ListingParams{Name: str("Greeter"), Tagline: str("Greets anyone."), Description: str("Greets whoever the task names."),
		Tags: &tags, InputSchema: &in, OutputSchema: &out, PricingModel: str("pay_per_use"), Price: &price,
		EndpointURL: str(srv.URL + "/execute"), SigningPublicKey: &pub, ListingNonce: &n.Nonce, Marketplace: &n.Marketplace}
	if err := client.SignListing(wallet, &p, ""); err != nil {
		t.Fatal(err)
	}
	if err := client.SignListingKey(agentKey, creatorW, &p, ""); err != nil {
		t.Fatal(err)
	}
	a, err := m.Listings.CreateListing(ctx, creatorW, p)
	if err != nil {
		t.Fatal(err)
	}
	return a.Agent.ID
}

// Balance is the caller's devnet balance.
func (m *Market) Balance(t *testing.T) crtx.Balance {
	t.Helper()
	b, err := m.Funds.Balances(context.Background(), m.Wallet, crtx.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	return b[crtx.Devnet]
}
