package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/creator"
)

func TestListingCollateralByTier(t *testing.T) {
	e := start(t, private)
	svc := newService(t, echo)
	for price, collateral := range map[string]string{
		"0.05": "10", "0.1": "10", "0.100001": "50", "1": "50", "1.5": "250", "10": "250", "10.01": "1000", "10000": "1000",
	} {
		t.Run(price, func(t *testing.T) {
			w, c := e.creatorOf("1500")
			a, err := list(c, params(svc, price))
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != "active" || a.Collateral != usdc(collateral) || a.Price != usdc(price) || a.Creator.Pubkey != w.address ||
				a.Creator.DisplayName != crtx.DefaultDisplayName(w.address) || a.TimeoutSeconds != 60 || a.EndpointURL != svc.URL {
				t.Errorf("listing = %+v", a)
			}
			if got, want := mainnetBalance(t, c), usdc("1500")-usdc(collateral); got != want {
				t.Errorf("creator balance %s, want %s", got, want)
			}
			coll, err := e.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountCollateral, a.AgentID))
			if err != nil || coll.Account.Balance != usdc(collateral) || coll.Account.Owner != w.address {
				t.Errorf("collateral account = %+v, %v", coll.Account, err)
			}
			listing := crtx.AccountAddress(crtx.AccountListing, a.AgentID)
			if a.OnChainListing != e.d.URL+"/explorer/account/"+listing+"?cluster=mainnet" {
				t.Errorf("on_chain_listing = %s", a.OnChainListing)
			}
			if kinds := accountTxKinds(t, e, listing); joined(kinds) != "AgentListed" {
				t.Errorf("listing account transactions = %v", kinds)
			}
			pub, err := e.anon.Agent(ctx, a.AgentID, "")
			if err != nil || pub.Name != "Word counter" || pub.Status != "active" {
				t.Errorf("public listing = %+v, %v", pub, err)
			}
		})
	}
}

func TestListingRefusals(t *testing.T) {
	e := start(t, private)
	good := newService(t, echo)
	impostor := newService(t, echo)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	w, c := e.creatorOf("100")
	walletAcct := crtx.AccountAddress(crtx.AccountWallet, w.address)
	p := params(good, "0.5")
	cases := []struct {
		name   string
		body   listingReq
		status int
		code   string
	}{
		{"no tags", p.with("tags", []string{}), 400, "invalid_request"},
		{"six tags", p.with("tags", []string{"a", "b", "c", "d", "e", "f"}), 400, "invalid_request"},
		{"uppercase tag", p.with("tags", []string{"Writing"}), 400, "invalid_request"},
		{"repeated tag", p.with("tags", []string{"data", "data"}), 400, "invalid_request"},
		{"empty name", p.with("name", " "), 400, "invalid_request"},
		{"long name", p.with("name", strings.Repeat("n", 65)), 400, "invalid_request"},
		{"long tagline", p.with("tagline", strings.Repeat("t", 161)), 400, "invalid_request"},
		{"no description", p.with("description", nil), 400, "invalid_request"},
		{"price precision", p.with("price_per_call_usdc", json.Number("0.0000001")), 400, "invalid_request"},
		{"price zero", p.with("price_per_call_usdc", json.Number("0")), 400, "invalid_request"},
		{"price too high", p.with("price_per_call_usdc", json.Number("10000.000001")), 400, "invalid_request"},
		{"price as string", p.with("price_per_call_usdc", "0.5"), 400, "invalid_request"},
		{"pricing model", p.with("pricing_model", "subscription"), 400, "invalid_request"},
		{"broken schema", p.with("output_schema", json.RawMessage(`{"type":5}`)), 400, "invalid_request"},
		{"schema with a file ref", p.with("output_schema", json.RawMessage(`{"$ref":"file:///etc/passwd"}`)), 400, "invalid_request"},
		{"input schema not an object", p.with("input_schema", json.RawMessage(`{"type":"string"}`)), 400, "invalid_request"},
		{"bad key", p.with("signing_public_key", "not-a-key"), 400, "invalid_request"},
		{"timeout", p.with("timeout_seconds", 301), 400, "invalid_request"},
		{"unknown field", p.with("category", "x"), 400, "invalid_request"},
		{"ftp endpoint", p.with("endpoint_url", "ftp://127.0.0.1/execute"), 400, "invalid_request"},
		{"userinfo", p.with("endpoint_url", "http://u:p@127.0.0.1/execute"), 400, "invalid_request"},
		{"unreachable endpoint", p.with("endpoint_url", closed.URL+"/execute"), 422, "endpoint_unreachable"},
		{"signs with another key", p.with("endpoint_url", impostor.URL), 422, "endpoint_unreachable"},
		{"no collateral", params(good, "10.5"), 402, "insufficient_balance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := list(c, tc.body)
			ce := wantCode(t, err, tc.status, tc.code)
			if tc.code == "insufficient_balance" && (!strings.Contains(ce.Message, "1000") || !strings.Contains(ce.Message, "100 USDC")) {
				t.Errorf("402 message %q names neither the collateral nor the balance", ce.Message)
			}
		})
	}
	t.Run("every field at fault at once", func(t *testing.T) {
		_, err := list(c, p.with("input_schema", nil).with("output_schema", nil).with("tags", []string{"Bad"}))
		ce := wantCode(t, err, 400, "invalid_request")
		want := []api.FieldError{{Field: "input_schema", Message: "is required"}, {Field: "output_schema", Message: "is required"}}
		if len(ce.Fields) != 3 || ce.Fields[0] != want[0] || ce.Fields[1] != want[1] || ce.Fields[2].Field != "tags" ||
			!strings.Contains(ce.Message, "input_schema: is required; output_schema: is required; tags: ") {
			t.Errorf("fields %+v, message %q", ce.Fields, ce.Message)
		}
	})
	t.Run("anonymous", func(t *testing.T) {
		_, err := list(e.anon, p)
		wantCode(t, err, 401, "authentication_required")
	})
	t.Run("API key", func(t *testing.T) {
		k, _ := c.CreateKey(ctx, clientKey("k", crtx.Mainnet))
		_, err := list(e.anon.WithToken(k.Key), p)
		wantCode(t, err, 401, "invalid_session")
	})

	// Nothing of any refusal remains: no agent, no transaction but the
	// deposit, no money moved.
	var mine api.CreatorAgentList
	if err := c.Do(ctx, "GET", "/v1/creator/agents", "", nil, &mine); err != nil || len(mine.Agents) != 0 {
		t.Errorf("creator agents after refusals = %+v, %v", mine, err)
	}
	if page, _ := e.anon.Agents(ctx, nil); page.Total != 0 {
		t.Errorf("catalog holds %d agents", page.Total)
	}
	if kinds := accountTxKinds(t, e, walletAcct); joined(kinds) != "Deposit" {
		t.Errorf("wallet transactions = %v", kinds)
	}
	// The whole mainnet ledger holds the deposit and nothing else.
	e.d.Store.View(ctx, func(tx crtx.Tx) error {
		all, err := tx.Ledger.Transactions(ctx, crtx.Mainnet, 0, 100)
		if err != nil || len(all) != 1 || all[0].Kind != crtx.TxDeposit {
			t.Errorf("mainnet ledger after refusals: %d transactions, %v", len(all), err)
		}
		return nil
	})
	if got := mainnetBalance(t, c); got != usdc("100") {
		t.Errorf("balance = %s", got)
	}

	// The same listing goes through once its problems are fixed.
	if _, err := list(c, p); err != nil {
		t.Fatalf("good listing after refusals: %v", err)
	}
}

// An endpoint that answers failed passes the reachability test (CONTRACT
// §6); one that answers nothing in time does not.
func TestReachabilityReplies(t *testing.T) {
	e := start(t, private)
	_, c := e.creatorOf("100")
	failing := newService(t, func(context.Context, creator.Request) (string, int, error) {
		return "", 0, errNotNow
	})
	if _, err := list(c, params(failing, "0.01")); err != nil {
		t.Errorf("an endpoint answering failed was refused: %v", err)
	}
	var mu sync.Mutex
	var seen creator.Request
	slow := newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		mu.Lock()
		seen = r
		mu.Unlock()
		<-ctx.Done()
		return "", 0, ctx.Err()
	})
	_, err := list(c, params(slow, "0.01").with("timeout_seconds", 1).with("name", "Slow"))
	if err != nil {
		t.Errorf("the creator SDK answers failed before the deadline, which passes: %v", err)
	}
	mu.Lock()
	got := seen
	mu.Unlock()
	if seen := got; !seen.Test || seen.Task != "crtx reachability test" || seen.Environment != "mainnet" || seen.TimeoutSeconds != 1 {
		t.Errorf("reachability request = %+v", seen)
	}
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	defer hang.Close()
	_, err = list(c, params(newService(t, echo), "0.01").with("endpoint_url", hang.URL).with("timeout_seconds", 1))
	wantCode(t, err, 422, "endpoint_unreachable")
}

type notNow struct{}

func (notNow) Error() string { return "not now" }

var errNotNow = notNow{}

// A creator's edit spans the new endpoint's reachability test (seconds);
// an operator's suspension made meanwhile stays.
func TestEditKeepsASuspensionMadeMeanwhile(t *testing.T) {
	m := newMarket(t, "1")
	agent := m.list(newService(t, echo), "0.1")
	probed := make(chan struct{})
	slowTest := newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Test {
			close(probed)
			time.Sleep(300 * time.Millisecond)
		}
		return "ok", 0, nil
	})
	edited := make(chan error, 1)
	go func() {
		_, err := patch(m.creatorC, agent, map[string]any{"endpoint_url": slowTest.URL, "signing_public_key": slowTest.PubKey,
			"tagline": "Counts words faster."})
		edited <- err
	}()
	<-probed
	if _, err := m.admin.Suspend(ctx, agent, true); err != nil {
		t.Fatal(err)
	}
	if err := <-edited; err != nil {
		t.Fatal(err)
	}
	mine, err := m.creatorC.CreatorAgents(ctx)
	if err != nil || len(mine) != 1 {
		t.Fatalf("creator's agents = %+v, %v", mine, err)
	}
	if a := mine[0]; !a.Suspended || a.Tagline != "Counts words faster." || a.EndpointURL != slowTest.URL {
		t.Errorf("after the edit: suspended %v, tagline %q, endpoint %s; want suspended, with the edit", a.Suspended, a.Tagline, a.EndpointURL)
	}
}

// The creator's wallet authorises the agent's signing key, on the ledger:
// a listing needs creator_signature over the listing statement, and so
// does a change of key; the listing transactions carry it, verifiable from
// their public data alone, and each execution names the transaction that
// registered the key it was signed with.
func TestListingCreatorSignature(t *testing.T) {
	m := newMarket(t, "10")
	svc := newService(t, echo)
	var host string
	nonce := func() string {
		t.Helper()
		n, err := m.creatorC.ListingNonce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		host = n.Marketplace
		return n.Nonce
	}
	n1 := nonce()
	p := params(svc, "0.05").with("listing_nonce", n1).with("marketplace", host)
	statement := func(kind crtx.TxKind, data map[string]string) []byte {
		t.Helper()
		b, err := crtx.ListingStatement(kind, data)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	listed := statement(crtx.TxAgentListed, map[string]string{"creator": m.creatorW.address, "name": "Word counter",
		"price_per_call_usdc": "0.05", "signing_public_key": svc.PubKey, "listing_nonce": n1, "marketplace": host})
	// send posts or patches body as it is, with no signature added.
	send := func(method, path string, body map[string]any) error {
		b, _ := json.Marshal(body)
		return m.creatorC.Do(ctx, method, path, "application/json", b, nil)
	}
	balance := mainnetBalance(t, m.creatorC)
	other := newWallet(t)
	for name, tc := range map[string]struct {
		body listingReq
		want string // in the message
	}{
		"none":             {p, `is required: the base58 Ed25519 signature, by your wallet ` + m.creatorW.address + `, of the UTF-8 bytes of the listing statement ` + string(listed)},
		"empty":            {p.with("creator_signature", ""), "is required"},
		"by another key":   {p.with("creator_signature", crtx.SignBase58(other.key, listed)), "does not verify: give the base58 Ed25519 signature, by your wallet " + m.creatorW.address},
		"of another price": {p.with("creator_signature", crtx.SignBase58(m.creatorW.key, bytes.Replace(listed, []byte(`"0.05"`), []byte(`"0.5"`), 1))), "does not verify"},
		"with a prefix":    {p.with("creator_signature", "ed25519:"+crtx.SignBase58(m.creatorW.key, listed)), "without the \"ed25519:\" prefix"},
		"not base58":       {p.with("creator_signature", "0OIl"), "does not verify"},
	} {
		t.Run(name, func(t *testing.T) {
			ce := wantCode(t, send("POST", "/v1/creator/agents", tc.body), 400, "invalid_request")
			if !strings.HasPrefix(ce.Message, "creator_signature: ") || !strings.Contains(ce.Message, tc.want) {
				t.Errorf("message %q: want creator_signature and %q", ce.Message, tc.want)
			}
		})
	}
	// Refused before anything was locked or written.
	if got := mainnetBalance(t, m.creatorC); got != balance {
		t.Errorf("creator balance %s after refusals, want %s", got, balance)
	}
	if mine, err := m.creatorC.CreatorAgents(ctx); err != nil || len(mine) != 0 {
		t.Errorf("creator agents after refusals = %+v, %v", mine, err)
	}

	sig := crtx.SignBase58(m.creatorW.key, listed)
	a, err := list(m.creatorC, p.with("creator_signature", sig))
	if err != nil {
		t.Fatal(err)
	}
	// newest is the newest transaction of kind on the agent's listing
	// account, read as anyone can.
	newest := func(kind crtx.TxKind) crtx.LedgerTx {
		t.Helper()
		v, err := m.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountListing, a.AgentID))
		if err != nil {
			t.Fatal(err)
		}
		for _, lt := range v.Transactions {
			if lt.Kind == kind {
				if lt.Data["creator"] != m.creatorW.address || lt.Data["agent_id"] != a.AgentID {
					t.Fatalf("%s data = %v", kind, lt.Data)
				}
				return lt
			}
		}
		t.Fatalf("no %s transaction on the listing account", kind)
		return crtx.LedgerTx{}
	}
	// keyTx is newest, checked from its public data alone: its
	// creator_signature verifies against data.creator over the statement
	// of its own data.
	keyTx := func(kind crtx.TxKind) crtx.LedgerTx {
		t.Helper()
		lt := newest(kind)
		creator, err := crtx.ParseAddress("creator", lt.Data["creator"])
		if err != nil || !crtx.VerifyBase58(creator, statement(lt.Kind, lt.Data), lt.Data["creator_signature"]) {
			t.Errorf("%s: creator_signature %q does not verify over %s", kind, lt.Data["creator_signature"], statement(lt.Kind, lt.Data))
		}
		return lt
	}
	agentListed := keyTx(crtx.TxAgentListed)
	if agentListed.Data["creator_signature"] != sig || agentListed.Data["signing_public_key"] != svc.PubKey {
		t.Errorf("AgentListed data = %v", agentListed.Data)
	}
	listingTx := func() string {
		t.Helper()
		rec := m.ran(t, m.key, a.AgentID)
		if rec.ListingTransaction == nil {
			t.Fatal("execution without listing_transaction")
		}
		return *rec.ListingTransaction
	}
	if got := listingTx(); got != agentListed.ID {
		t.Errorf("listing_transaction %s, want the AgentListed %s", got, agentListed.ID)
	}

	// A change that keeps the key needs no signature, and one given is
	// ignored: it is not written.
	if err := send("PATCH", "/v1/creator/agents/"+a.AgentID, map[string]any{"tagline": "Counts words, quickly.",
		"signing_public_key": svc.PubKey, "creator_signature": "not a signature"}); err != nil {
		t.Fatalf("an edit that keeps the key: %v", err)
	}
	if lt := newest(crtx.TxListingUpdated); lt.Data["changed"] != "tagline" || lt.Data["creator_signature"] != "" {
		t.Errorf("ListingUpdated of the tagline = %v", lt.Data)
	}
	// A new key needs the wallet's signature over the agent and the key.
	next := newService(t, echo)
	n2 := nonce()
	change := map[string]any{"endpoint_url": next.URL, "signing_public_key": next.PubKey, "listing_nonce": n2,
		"marketplace": host, "replaces": agentListed.ID}
	ce := wantCode(t, send("PATCH", "/v1/creator/agents/"+a.AgentID, change), 400, "invalid_request")
	rekeyed := statement(crtx.TxListingUpdated, map[string]string{"agent_id": a.AgentID, "creator": m.creatorW.address,
		"signing_public_key": next.PubKey, "listing_nonce": n2, "marketplace": host, "replaces": agentListed.ID})
	if !strings.HasPrefix(ce.Message, "creator_signature: is required") || !strings.Contains(ce.Message, string(rekeyed)) {
		t.Errorf("message %q does not say what to sign", ce.Message)
	}
	change["creator_signature"] = crtx.SignBase58(other.key, rekeyed)
	wantCode(t, send("PATCH", "/v1/creator/agents/"+a.AgentID, change), 400, "invalid_request")
	if mine, err := m.creatorC.CreatorAgents(ctx); err != nil || len(mine) != 1 || mine[0].SigningPublicKey != svc.PubKey {
		t.Fatalf("after refused key changes: %+v, %v", mine, err)
	}
	if got := listingTx(); got != agentListed.ID {
		t.Errorf("listing_transaction %s after refused key changes, want %s", got, agentListed.ID)
	}
	delete(change, "creator_signature")
	if _, err := patch(m.creatorC, a.AgentID, change); err != nil {
		t.Fatal(err)
	}
	updated := keyTx(crtx.TxListingUpdated)
	if updated.Data["signing_public_key"] != next.PubKey || updated.Data["creator_signature"] != crtx.SignBase58(m.creatorW.key, rekeyed) ||
		updated.Data["changed"] != "endpoint_url,signing_public_key" {
		t.Errorf("ListingUpdated of the key = %v", updated.Data)
	}
	if got := listingTx(); got != updated.ID {
		t.Errorf("listing_transaction %s, want the ListingUpdated %s", got, updated.ID)
	}
	// Later changes that keep the key leave it registered by that one.
	if _, err := patch(m.creatorC, a.AgentID, map[string]any{"status": "paused"}); err != nil {
		t.Fatal(err)
	}
	if _, err := patch(m.creatorC, a.AgentID, map[string]any{"status": "active"}); err != nil {
		t.Fatal(err)
	}
	if got := listingTx(); got != updated.ID {
		t.Errorf("listing_transaction %s after a pause, want %s", got, updated.ID)
	}
}

// The lowest price is 0.0001 USDC, whose 1% fee is 1 micro-USDC: below it
// the fee rounds to nothing and a creator's calls to its own agent would
// cost it nothing. A listing and a price change below it are refused.
func TestMinimumPrice(t *testing.T) {
	m := newMarket(t, "10")
	svc := newService(t, echo)
	for _, price := range []string{"0.000099", "0.000001"} {
		_, err := list(m.creatorC, params(svc, price))
		if ce := wantCode(t, err, 400, "invalid_request"); !strings.Contains(ce.Message, "price_per_call_usdc") || !strings.Contains(ce.Message, "0.0001") {
			t.Errorf("listing at %s: %q names neither the field nor the minimum", price, ce.Message)
		}
	}
	agent := m.list(svc, "0.0001")
	_, err := patch(m.creatorC, agent, map[string]any{"price_per_call_usdc": json.Number("0.000099")})
	if ce := wantCode(t, err, 400, "invalid_request"); !strings.Contains(ce.Message, "price_per_call_usdc") {
		t.Errorf("price change: %q does not name the field", ce.Message)
	}
	if rec := m.ran(t, m.liveKey, agent); rec.PlatformAmount != 1 || rec.Cost != 100 {
		t.Errorf("a call at the minimum: cost %s, fee %s; want 0.0001 and 0.000001", rec.Cost, rec.PlatformAmount)
	}
}
