package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
)

// proxy forwards every request, headers and body, to target and relays the
// answer: what a creator would put in front of someone else's service to
// sell it as theirs. It keeps the last request it saw.
type proxy struct {
	URL string

	mu   sync.Mutex
	hdr  http.Header
	body []byte
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.hdr, p.body = r.Header.Clone(), body
		p.mu.Unlock()
		if target == "" {
			http.Error(w, "no target", http.StatusBadGateway)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), "POST", target, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL + "/execute"
	return p
}

func (p *proxy) last() (http.Header, []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hdr.Clone(), p.body
}

// A creator cannot list someone else's agent behind a forwarding proxy and
// be paid for its work: the listing needs the signing key's own signature
// over a statement naming the listing wallet, and a request the
// marketplace signed for one agent is refused by another agent's service.
func TestResaleThroughAProxyIsRefused(t *testing.T) {
	m := newMarket(t, "10")
	mkey, err := creator.FetchMarketplaceKey(ctx, m.d.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The victim: a service that checks the marketplace's signatures,
	// listed by its creator.
	var victimCalls atomic.Int32
	vkey := agentKey()
	vh := creator.NewHandler(vkey, func(_ context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			victimCalls.Add(1)
		}
		return "the victim's work", 0, nil
	}, creator.Options{MarketplaceKey: mkey})
	vsrv := httptest.NewServer(vh)
	t.Cleanup(vsrv.Close)
	victim := service{URL: vsrv.URL + "/execute", Key: vkey, PubKey: vh.PublicKey()}
	victimAgent := m.list(victim, "0.05")
	vListed := newestListing(t, m, victimAgent)

	// The reseller lists the victim's key with a proxy to the victim as its
	// endpoint. The proxy relays the reachability test, which the victim's
	// service answers: a reply proves nothing about who holds the key.
	rw, reseller := m.creatorOf("100")
	px := newProxy(t, victim.URL)
	var host string
	nonce := func() string {
		t.Helper()
		n, err := reseller.ListingNonce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		host = n.Marketplace
		return n.Nonce
	}
	n := nonce()
	p := params(service{URL: px.URL, PubKey: victim.PubKey}, "0.05").with("name", "Resold").with("listing_nonce", n).with("marketplace", host)
	resold := statementFor(t, crtx.TxAgentListed, map[string]string{"creator": rw.address, "name": "Resold",
		"price_per_call_usdc": "0.05", "signing_public_key": victim.PubKey, "listing_nonce": n, "marketplace": host})
	_, forger, _ := ed25519.GenerateKey(nil)
	for name, keySig := range map[string]any{
		"without a key signature":                  nil,
		"with one by another key":                  crtx.SignBase58(forger, resold),
		"with the victim's, read from the ledger":  vListed.Data["key_signature"],
		"with the victim's over its own statement": crtx.SignBase58(vkey, statementFor(t, crtx.TxAgentListed, vListed.Data)),
	} {
		// Sent as it is: the test's list would sign with any key the test
		// made, the victim's too.
		body := p.with("creator_signature", crtx.SignBase58(rw.key, resold)).with("key_signature", keySig)
		b, _ := json.Marshal(body)
		ce := wantCode(t, reseller.Do(ctx, "POST", "/v1/creator/agents", "application/json", b, nil), 400, "invalid_request")
		if !strings.HasPrefix(ce.Message, "key_signature: ") {
			t.Errorf("%s: message %q does not name key_signature", name, ce.Message)
		}
	}
	if mine, err := reseller.CreatorAgents(ctx); err != nil || len(mine) != 0 {
		t.Fatalf("the reseller listed %+v (%v)", mine, err)
	}
	// Nor can the reseller move its own listing onto the victim's key.
	own := newService(t, echo)
	ownAgent, err := list(reseller, params(own, "0.05").with("name", "Own"))
	if err != nil {
		t.Fatal(err)
	}
	n = nonce()
	rekey := statementFor(t, crtx.TxListingUpdated, map[string]string{"agent_id": ownAgent.AgentID, "creator": rw.address,
		"signing_public_key": victim.PubKey, "listing_nonce": n, "marketplace": host, "replaces": ownAgent.KeyTransaction})
	b, _ := json.Marshal(map[string]any{"endpoint_url": px.URL, "signing_public_key": victim.PubKey, "listing_nonce": n,
		"marketplace": host, "replaces": ownAgent.KeyTransaction,
		"creator_signature": crtx.SignBase58(rw.key, rekey), "key_signature": crtx.SignBase58(forger, rekey)})
	ce := wantCode(t, reseller.Do(ctx, "PATCH", "/v1/creator/agents/"+ownAgent.AgentID, "application/json", b, nil), 400, "invalid_request")
	if !strings.HasPrefix(ce.Message, "key_signature: ") {
		t.Errorf("key change: message %q does not name key_signature", ce.Message)
	}

	// A request the marketplace signed for the reseller's own agent,
	// captured at its endpoint, is refused by the victim's service, and by
	// the agent's own once its environment or test flag is changed.
	capture := newProxy(t, own.URL)
	if _, err := patch(reseller, ownAgent.AgentID, map[string]any{"endpoint_url": capture.URL}); err != nil {
		t.Fatal(err)
	}
	m.ran(t, m.key, ownAgent.AgentID)
	hdr, body := capture.last()
	if hdr.Get(crtx.HeaderAgentID) != ownAgent.AgentID || hdr.Get(crtx.HeaderSigningKey) != own.PubKey || hdr.Get(crtx.HeaderEnvironment) != "devnet" {
		t.Fatalf("captured headers %v", hdr)
	}
	replay := func(url string, hdr http.Header) int {
		t.Helper()
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header = hdr
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := replay(victim.URL, hdr.Clone()); got != http.StatusForbidden {
		t.Errorf("the victim's service answered a request for another agent with %d", got)
	}
	ownChecked := creator.NewHandler(own.Key, echo, creator.Options{MarketplaceKey: mkey, AgentIDs: []string{ownAgent.AgentID}})
	osrv := httptest.NewServer(ownChecked)
	t.Cleanup(osrv.Close)
	for name, change := range map[string]func(http.Header){
		"mainnet": func(h http.Header) { h.Set(crtx.HeaderEnvironment, "mainnet") },
		"a test":  func(h http.Header) { h.Set(crtx.HeaderTest, "true") },
	} {
		h := hdr.Clone()
		change(h)
		if got := replay(osrv.URL, h); got != http.StatusUnauthorized {
			t.Errorf("the request made %s: status %d", name, got)
		}
	}
	if got := replay(osrv.URL, hdr.Clone()); got != http.StatusOK {
		t.Errorf("the captured request, unchanged, at its own agent: status %d", got)
	}
	if n := victimCalls.Load(); n != 0 {
		t.Errorf("the victim did %d executions' work", n)
	}
}

// newestListing is the newest AgentListed or ListingUpdated transaction
// of agent's listing account that registered its key, read as anyone can.
func newestListing(t *testing.T, m *marketplace, agent string) crtx.LedgerTx {
	t.Helper()
	v, err := m.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountListing, agent))
	if err != nil {
		t.Fatal(err)
	}
	for _, lt := range v.Transactions {
		if lt.Data["creator_signature"] != "" {
			return lt
		}
	}
	t.Fatalf("no listing transaction of %s registers a key", agent)
	return crtx.LedgerTx{}
}

func statementFor(t *testing.T, kind crtx.TxKind, data map[string]string) []byte {
	t.Helper()
	b, err := crtx.ListingStatement(kind, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The signatures a listing transaction carries, read from the public
// ledger, never list again, not even for the same creator's session: the
// statement names a one-time nonce the marketplace gave that wallet, used
// up with the transaction. Nor does a nonce of another wallet, an expired
// one, or a key change replayed after the key moved on.
func TestListingStatementsAreOneTime(t *testing.T) {
	m := newMarket(t, "10")
	svc := newService(t, echo)
	a, err := list(m.creatorC, params(svc, "0.05"))
	if err != nil {
		t.Fatal(err)
	}
	listed := newestListing(t, m, a.AgentID)
	stmt := statementFor(t, crtx.TxAgentListed, listed.Data)
	if n := listed.Data["listing_nonce"]; !strings.HasPrefix(n, "lst_") || !strings.Contains(string(stmt), n) {
		t.Fatalf("AgentListed data %v: no listing nonce in its statement %s", listed.Data, stmt)
	}
	if !crtx.VerifyBase58(svc.Key.Public().(ed25519.PublicKey), stmt, listed.Data["key_signature"]) {
		t.Errorf("key_signature %q does not verify over %s", listed.Data["key_signature"], stmt)
	}
	// send posts or patches body as it is, signed by nothing more.
	send := func(method, path string, body map[string]any) error {
		b, _ := json.Marshal(body)
		return m.creatorC.Do(ctx, method, path, "application/json", b, nil)
	}
	refused := func(name, field string, err error) {
		t.Helper()
		if ce := wantCode(t, err, 400, "invalid_request"); !strings.HasPrefix(ce.Message, field+": ") {
			t.Errorf("%s: message %q does not name %s", name, ce.Message, field)
		}
	}
	fromLedger := func(p listingReq, d map[string]string) listingReq {
		p = p.with("listing_nonce", d["listing_nonce"]).with("marketplace", d["marketplace"])
		if r, ok := d["replaces"]; ok {
			p = p.with("replaces", r)
		}
		return p.with("creator_signature", d["creator_signature"]).with("key_signature", d["key_signature"])
	}
	balance := mainnetBalance(t, m.creatorC)
	refused("the AgentListed replayed", "listing_nonce", send("POST", "/v1/creator/agents", fromLedger(params(svc, "0.05"), listed.Data)))
	fresh, err := m.creatorC.ListingNonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refused("its signatures with a new nonce", "creator_signature",
		send("POST", "/v1/creator/agents", fromLedger(params(svc, "0.05"), listed.Data).with("listing_nonce", fresh.Nonce)))
	// A nonce given to another wallet, signed as it should be.
	_, otherC := m.creatorOf("0")
	theirs, err := otherC.ListingNonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = list(m.creatorC, params(svc, "0.05").with("listing_nonce", theirs.Nonce))
	refused("another wallet's nonce", "listing_nonce", err)
	// One that expired, signed as it should be.
	m.clock.Advance(crtx.ListingNonceTTL + time.Minute)
	_, err = list(m.creatorC, params(svc, "0.05").with("listing_nonce", fresh.Nonce))
	refused("an expired nonce", "listing_nonce", err)
	if got := mainnetBalance(t, m.creatorC); got != balance {
		t.Errorf("balance %s after refused listings, want %s", got, balance)
	}
	if mine, err := m.creatorC.CreatorAgents(ctx); err != nil || len(mine) != 1 {
		t.Fatalf("agents after refused listings: %+v, %v", mine, err)
	}

	// A change of key, replayed once the key has moved on.
	next, third := newService(t, echo), newService(t, echo)
	if _, err := patch(m.creatorC, a.AgentID, map[string]any{"endpoint_url": next.URL, "signing_public_key": next.PubKey}); err != nil {
		t.Fatal(err)
	}
	rekeyed := newestListing(t, m, a.AgentID)
	if _, err := patch(m.creatorC, a.AgentID, map[string]any{"endpoint_url": third.URL, "signing_public_key": third.PubKey}); err != nil {
		t.Fatal(err)
	}
	replay := fromLedger(listingReq{"endpoint_url": next.URL, "signing_public_key": next.PubKey}, rekeyed.Data)
	refused("a key change replayed", "replaces", send("PATCH", "/v1/creator/agents/"+a.AgentID, replay))
	// Signed anew, with a fresh nonce, but for the key the listing had
	// before: the statement binds the key transaction it replaces, so a
	// change made for an earlier key does not move the listing now.
	_, err = patch(m.creatorC, a.AgentID, map[string]any{"endpoint_url": next.URL, "signing_public_key": next.PubKey,
		"replaces": rekeyed.Data["replaces"]})
	refused("a key change for an earlier key", "replaces", err)
	if mine, err := m.creatorC.CreatorAgents(ctx); err != nil || mine[0].SigningPublicKey != third.PubKey {
		t.Errorf("after the replayed key change: %+v, %v", mine, err)
	}
	// A statement signed, as it should be, for another marketplace.
	elsewhere := newService(t, echo)
	_, err = list(m.creatorC, params(elsewhere, "0.05").with("name", "Elsewhere").with("marketplace", "market.example.org"))
	refused("a listing signed for another marketplace", "marketplace", err)
	_, err = patch(m.creatorC, a.AgentID, map[string]any{"endpoint_url": elsewhere.URL, "signing_public_key": elsewhere.PubKey,
		"marketplace": "market.example.org"})
	refused("a key change signed for another marketplace", "marketplace", err)
	if mine, err := m.creatorC.CreatorAgents(ctx); err != nil || len(mine) != 1 || mine[0].SigningPublicKey != third.PubKey {
		t.Errorf("after statements for another marketplace: %+v, %v", mine, err)
	}
}

// The client SDK makes the nonce and both signatures itself: a client of
// SignIn signs with the wallet, WithAgentKey with the agent's key, for a
// new listing and for a change of key.
func TestClientSignsListingsWithTheAgentKey(t *testing.T) {
	m := newMarket(t, "10")
	svc, next := newService(t, echo), newService(t, echo)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := usdc("0.05"), []string{"writing"}
	p := crtx.ListingParams{Name: str("Echo"), Tagline: str("Echoes."), Description: str("Echoes."), Tags: &tags,
		InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(svc.URL), SigningPublicKey: str(svc.PubKey)}
	_, err := m.creatorC.CreateListing(ctx, p)
	if ce := wantCode(t, err, 400, "invalid_request"); !strings.HasPrefix(ce.Message, "key_signature: is required") {
		t.Errorf("a listing without the agent's key: %q", ce.Message)
	}
	a, err := m.creatorC.WithAgentKey(svc.Key).CreateListing(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.creatorC.WithAgentKey(svc.Key).UpdateListing(ctx, a.AgentID, crtx.ListingParams{EndpointURL: str(next.URL), SigningPublicKey: str(next.PubKey)})
	if ce := wantCode(t, err, 400, "invalid_request"); !strings.HasPrefix(ce.Message, "key_signature: is required") {
		t.Errorf("a change to a key the client does not hold: %q", ce.Message)
	}
	if _, err := m.creatorC.WithAgentKey(next.Key).UpdateListing(ctx, a.AgentID, crtx.ListingParams{EndpointURL: str(next.URL), SigningPublicKey: str(next.PubKey)}); err != nil {
		t.Fatal(err)
	}
	lt := newestListing(t, m, a.AgentID)
	stmt := statementFor(t, lt.Kind, lt.Data)
	if lt.Kind != crtx.TxListingUpdated || lt.Data["signing_public_key"] != next.PubKey ||
		!crtx.VerifyBase58(next.Key.Public().(ed25519.PublicKey), stmt, lt.Data["key_signature"]) {
		t.Errorf("the key change's transaction %s %v", lt.Kind, lt.Data)
	}
}
