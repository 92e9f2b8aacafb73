package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// service is a creator's execution service on 127.0.0.1, built on the
// creator package and signing with its own key.
type service struct {
	URL    string
	Key    ed25519.PrivateKey
	PubKey string
}

// agentKeys are the agent signing keys tests made, by public key, so that
// list and patch sign listings with them as their holders do.
var agentKeys sync.Map

// agentKey makes an agent signing key that list and patch can sign with.
func agentKey() ed25519.PrivateKey {
	pub, key, _ := ed25519.GenerateKey(nil)
	agentKeys.Store(crtx.Address(pub), key)
	return key
}

func newService(t *testing.T, fn creator.Func) service {
	t.Helper()
	key := agentKey()
	return serveAgent(t, key, creator.NewHandler(key, fn, creator.Options{}))
}

// newStreamService is newService for a creator that streams.
func newStreamService(t *testing.T, fn creator.StreamFunc) service {
	t.Helper()
	key := agentKey()
	return serveAgent(t, key, creator.NewStreamHandler(key, fn, creator.Options{}))
}

// serveAgent serves h, which signs with key, on 127.0.0.1.
func serveAgent(t *testing.T, key ed25519.PrivateKey, h *creator.Handler) service {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("POST /execute", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	servers[srv.URL+"/execute"] = srv
	return service{URL: srv.URL + "/execute", Key: key, PubKey: h.PublicKey()}
}

func echo(_ context.Context, r creator.Request) (string, int, error) {
	return "echo: " + r.Task, 3, nil
}

// private lets creator endpoints live on 127.0.0.1, as tests need.
func private(c *daemon.Config) { c.AllowPrivateEndpoints = true }

type listingReq map[string]any

func params(s service, price string) listingReq {
	return listingReq{
		"name": "Word counter", "tagline": "Counts words in a text.", "description": "Counts words, lines and characters.",
		"tags":          []string{"writing", "data"},
		"input_schema":  json.RawMessage(`{"type":"object","properties":{"lang":{"type":"string"}},"required":[]}`),
		"output_schema": json.RawMessage(`{"type":"object"}`), "pricing_model": "pay_per_use",
		"price_per_call_usdc": json.Number(price), "endpoint_url": s.URL, "signing_public_key": s.PubKey,
	}
}

func (p listingReq) with(k string, v any) listingReq {
	out := listingReq{}
	for kk, vv := range p {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

// creatorOf signs in a new wallet holding amount USDC on mainnet.
func (e *env) creatorOf(amount string) (wallet, *client.Client) {
	e.t.Helper()
	w := newWallet(e.t)
	if amount != "0" {
		if _, err := e.admin.Deposit(ctx, crtx.Mainnet, w.address, usdc(amount)); err != nil {
			e.t.Fatal(err)
		}
	}
	return w, e.signIn(w)
}

// list posts a listing, signed by c's wallet and the agent's key as the
// client's CreateListing would (withSignatures).
func list(c *client.Client, p listingReq) (api.CreatorAgent, error) {
	var a api.CreatorAgent
	body, _ := json.Marshal(withSignatures(c, p, ""))
	err := c.Do(ctx, "POST", "/v1/creator/agents", "application/json", body, &a)
	return a, err
}

// patch changes a listing; a new signing key is signed by c's wallet and
// the key, as the client's UpdateListing would (withSignatures).
func patch(c *client.Client, id string, p map[string]any) (api.CreatorAgent, error) {
	var a api.CreatorAgent
	body, _ := json.Marshal(withSignatures(c, p, id))
	err := c.Do(ctx, "PATCH", "/v1/creator/agents/"+id, "application/json", body, &a)
	return a, err
}

// withSignatures is body with a new listing_nonce, the creator_signature
// that c's wallet key (a client of SignIn) makes for it, and the
// key_signature of the agent key it names when a test made that key
// (agentKey): over a new listing's name, price and key when agentID is "",
// over agentID's new key otherwise, and the nonce. A member the body
// already has is kept (and signed, for the nonce); a body that lacks what
// the statement needs, or a client without a wallet key, is left as it is:
// the marketplace's answer is then the test.
func withSignatures(c *client.Client, body map[string]any, agentID string) map[string]any {
	if agentID != "" && body["signing_public_key"] == nil {
		return body
	}
	var p crtx.ListingParams
	n, err := c.ListingNonce(ctx)
	if s, ok := body["listing_nonce"].(string); ok {
		p.ListingNonce = &s
	} else if err == nil {
		p.ListingNonce = &n.Nonce
	}
	if s, ok := body["marketplace"].(string); ok {
		p.Marketplace = &s
	} else if err == nil {
		p.Marketplace = &n.Marketplace
	}
	if s, ok := body["replaces"].(string); ok {
		p.Replaces = &s
	} else if agents, err := c.CreatorAgents(ctx); err == nil && agentID != "" {
		for _, a := range agents {
			if a.AgentID == agentID {
				p.Replaces = &a.KeyTransaction
			}
		}
	}
	for k, dst := range map[string]any{"name": &p.Name, "price_per_call_usdc": &p.Price, "signing_public_key": &p.SigningPublicKey,
		"pricing_model": &p.PricingModel, "price_per_1k_tokens_usdc": &p.Per1k, "max_price_per_call_usdc": &p.Cap} {
		if v, ok := body[k]; ok {
			b, _ := json.Marshal(v)
			if json.Unmarshal(b, dst) != nil {
				return body
			}
		}
	}
	out := map[string]any{}
	if p.ListingNonce != nil {
		out["listing_nonce"] = *p.ListingNonce
	}
	if p.Marketplace != nil {
		out["marketplace"] = *p.Marketplace
	}
	if p.Replaces != nil && agentID != "" {
		out["replaces"] = *p.Replaces
	}
	if c.SignListing(&p, agentID) == nil && p.CreatorSignature != nil {
		out["creator_signature"] = *p.CreatorSignature
	}
	if p.SigningPublicKey != nil {
		if k, ok := agentKeys.Load(*p.SigningPublicKey); ok && c.SignListingKey(k.(ed25519.PrivateKey), &p, agentID) == nil && p.KeySignature != nil {
			out["key_signature"] = *p.KeySignature
		}
	}
	for k, v := range body {
		out[k] = v
	}
	return out
}

func mainnetBalance(t *testing.T, c *client.Client) crtx.USDC {
	t.Helper()
	w, err := c.Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return w.Balances[crtx.Mainnet].Available
}

func accountTxKinds(t *testing.T, e *env, addr string) []string {
	t.Helper()
	v, err := e.anon.Account(ctx, crtx.Mainnet, addr)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i := len(v.Transactions) - 1; i >= 0; i-- {
		kinds = append(kinds, string(v.Transactions[i].Kind))
	}
	return kinds
}

func joined(s []string) string { return strings.Join(s, ",") }

func clientKey(name string, env crtx.Environment) client.KeyParams {
	return client.KeyParams{Name: name, Environment: env}
}

// closed services: newService registers the server for cleanup; closing it
// early makes its port refuse connections.
var servers = map[string]*httptest.Server{}

func closeService(t *testing.T, s service) {
	t.Helper()
	srv, ok := servers[s.URL]
	if !ok {
		t.Fatal("unknown service")
	}
	srv.Close()
}
