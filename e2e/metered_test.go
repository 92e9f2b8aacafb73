package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/x402"
)

// metered are a metered listing's prices: 0.001 USDC a call, 0.0025 per
// 1,000 tokens, at most 0.5 a call.
var metered = map[string]any{"pricing_model": "metered", "price_per_1k_tokens_usdc": json.Number("0.0025"),
	"max_price_per_call_usdc": json.Number("0.5")}

// newMeteredService serves a creator whose every answer used tokens,
// signed as the Go SDK signs a metered listing's usage.
func newMeteredService(t *testing.T, tokens int) service {
	t.Helper()
	key := agentKey()
	return serveAgent(t, key, creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		return "words about " + r.Task + fmt.Sprintf(" (at most %d tokens)", r.MaxTokens), tokens, nil
	}, creator.Options{Metered: true}))
}

// A metered call holds its most, is charged base + tokens × price per 1k
// from the usage its creator signed, and gets the rest back at once; the
// record, the receipt, the ledger and verify all carry the signed usage.
func TestMeteredCall(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newMeteredService(t, 20_000), "0.001", metered)

	listing, err := m.anon.Agent(ctx, agent, crtx.Devnet)
	if err != nil || listing.PricingModel != crtx.PricingMetered || listing.Price != usdc("0.001") ||
		listing.Per1k == nil || *listing.Per1k != usdc("0.0025") || listing.Cap == nil || *listing.Cap != usdc("0.5") {
		t.Fatalf("the listing = %+v, %v; want its three prices", listing.AgentFacts, err)
	}
	mine, err := m.creatorC.CreatorAgents(ctx)
	if err != nil || len(mine) != 1 || mine[0].Collateral != usdc("50") {
		t.Errorf("the creator's listing = %+v, %v; want the collateral of its most's tier, 50", mine, err)
	}

	rec, err := m.key.Execute(ctx, agent, run("the sea"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The creator was told what the hold pays for: (0.5 - 0.001) / 0.0025
	// × 1,000 tokens.
	if rec.Result == nil || !strings.HasSuffix(*rec.Result, "(at most 199600 tokens)") {
		t.Errorf("the creator's answer: %v", rec.Result)
	}
	// 0.001 + 20 × 0.0025 = 0.051; the fee, 1 %, 0.00051.
	mv := rec.Metered
	if rec.Status != crtx.ExecCompleted || rec.Cost != usdc("0.051") || rec.PlatformAmount != usdc("0.00051") ||
		rec.CreatorAmount != usdc("0.05049") || mv == nil || mv.Held != usdc("0.5") || mv.Returned != usdc("0.449") ||
		mv.TokensUsed == nil || *mv.TokensUsed != 20_000 || mv.UsageSignature == nil || mv.ReturnedTo == nil ||
		*mv.ReturnedTo != m.callerW.address || rec.TokensUsed == nil || *rec.TokensUsed != 20_000 {
		t.Fatalf("the record = %+v, metered %+v", rec, mv)
	}
	// The unused hold is back before any roll-up: only the charge is gone.
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9.949") {
		t.Errorf("the caller's balance after the call = %+v; want 10 - 0.051", b)
	}
	pub, _ := crtx.ParseAddress("signing_public_key", rec.SigningPublicKey)
	if !crtx.VerifyUsage(ed25519.PublicKey(pub), rec.ExecutionID, *rec.ResultHash, 20_000, *mv.UsageSignature) {
		t.Errorf("the usage signature %s does not verify", *mv.UsageSignature)
	}
	record, err := m.anon.Transaction(ctx, crtx.Devnet, *rec.LedgerTransaction)
	if err != nil || record.Data["tokens_used"] != "20000" || record.Data["usage_signature"] != *mv.UsageSignature ||
		record.Data["held_usdc"] != "0.5" || record.Data["price_per_1k_tokens_usdc"] != "0.0025" {
		t.Errorf("the ExecutionRecord = %+v, %v", record.Data, err)
	}
	m.rollup()
	report, err := m.key.Verify(ctx, rec.ExecutionID)
	if err != nil || !report.OK() || !checked(report, "metered charge") {
		t.Errorf("verify: %+v, %v", report, err)
	}
	raw, err := m.key.Receipt(ctx, rec.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	wk, _ := m.anon.WellKnown(ctx)
	key, _ := crtx.ParseAddress("signing_public_key", wk.SigningPublicKey)
	if rc, err := client.VerifyReceipt(raw, ed25519.PublicKey(key)); err != nil || rc.Metered == nil || rc.Metered.Returned != usdc("0.449") {
		t.Errorf("the receipt = %+v, %v", rc, err)
	}

	// The caller lowers the most: the hold, and so the charge, stop there.
	lower := usdc("0.03")
	capped, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "more", MaxPrice: &lower}, client.ExecuteOptions{})
	if err != nil || capped.Cost != lower || capped.Metered.Held != lower || capped.Metered.Returned != 0 {
		t.Errorf("a call at most 0.03 = %+v, %v", capped, err)
	}
	// max_cost_usdc, the price guard, bounds the hold as well.
	guard := usdc("0.02")
	if guarded, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "guarded", MaxCost: &guard}, client.ExecuteOptions{}); err != nil ||
		guarded.Cost != guard || guarded.Metered.Held != guard {
		t.Errorf("a call with max_cost_usdc 0.02 = %+v, %v", guarded, err)
	}
	below := usdc("0.0005")
	_, err = m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "less", MaxPrice: &below}, client.ExecuteOptions{})
	wantCode(t, err, 400, "invalid_request")
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9.899") {
		t.Errorf("the caller's balance = %+v; want 10 - 0.051 - 0.03 - 0.02", b)
	}
}

// checked reports whether report ran the check named name.
func checked(report client.VerifyReport, name string) bool {
	for _, c := range report.Checks {
		if c.Name == name {
			return c.OK
		}
	}
	return false
}

// A dispute of a metered call is about what it charged, not what it held:
// the operator sees the charge, the refund comes off the key's spent at
// most the charge, the slash comes off the collateral of the most's tier,
// and the disputed record still verifies against the signed usage.
func TestMeteredDispute(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newMeteredService(t, 20_000), "0.001", metered)
	spent := func() crtx.USDC {
		t.Helper()
		keys, err := m.callerC.Keys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.Environment == crtx.Mainnet {
				return k.TotalSpent
			}
		}
		t.Fatal("no mainnet key")
		return 0
	}
	rec := m.ran(t, m.liveKey, agent)
	m.ran(t, m.liveKey, agent)
	// Two calls charged 0.051 each of the 0.5 each held.
	if got := spent(); rec.Cost != usdc("0.051") || got != usdc("0.102") {
		t.Fatalf("the call cost %s and the key spent %s; want 0.051 and 0.102", rec.Cost, got)
	}
	d, err := m.liveKey.OpenDispute(ctx, rec.ExecutionID, crtx.DisputeParams{Reason: "fraud", Description: "counted too many tokens"})
	if err != nil {
		t.Fatal(err)
	}
	open, err := m.admin.AdminDisputes(ctx, "open")
	if err != nil || len(open) != 1 || open[0].ExecutionCost != usdc("0.051") {
		t.Fatalf("the operator's open disputes = %+v, %v; want the call's charge, 0.051, not its hold", open, err)
	}
	before := m.balance(m.callerW, crtx.Mainnet)
	// The operator refunds past the charge, from the slash.
	slash, refund := usdc("1"), usdc("0.1")
	if _, err := m.admin.ResolveDispute(ctx, d.DisputeID, crtx.ResolveParams{Outcome: "upheld", Slash: &slash, Refund: &refund}); err != nil {
		t.Fatal(err)
	}
	if after := m.balance(m.callerW, crtx.Mainnet); after.Available-before.Available != refund {
		t.Errorf("the caller got %s back; want the refund, 0.1", after.Available-before.Available)
	}
	// The key's spent loses the disputed call's charge: neither the
	// refund (0.1) nor the hold (0.5).
	if got := spent(); got != usdc("0.051") {
		t.Errorf("the key spent %s after the ruling; want 0.051, the other call's charge", got)
	}
	if v, err := m.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountCollateral, agent)); err != nil || v.Account.Balance != usdc("49") {
		t.Errorf("the listing's collateral account = %+v, %v; want 50 less the slash of 1", v.Account, err)
	}
	m.rollup()
	if report, err := m.liveKey.Verify(ctx, rec.ExecutionID); err != nil || !report.OK() || !checked(report, "metered charge") {
		t.Errorf("verifying the disputed metered call: %+v, %v", report, err)
	}
}

// A metered reply whose usage is not signed, or signed wrong, fails the
// call and returns the whole hold: the caller pays nothing.
func TestMeteredUsageRefused(t *testing.T) {
	m := newMarket(t, "10")
	for _, c := range []struct {
		name   string
		usage  func(req crtx.CreatorRequest, hash string, key ed25519.PrivateKey) (*int64, *string)
		status int
		code   string
	}{
		{"no usage", func(crtx.CreatorRequest, string, ed25519.PrivateKey) (*int64, *string) { return nil, nil }, 502, "invalid_agent_response"},
		{"usage of other tokens", func(req crtx.CreatorRequest, hash string, key ed25519.PrivateKey) (*int64, *string) {
			n, sig := int64(10), crtx.SignUsage(key, req.ExecutionID, hash, 10_000)
			return &n, &sig
		}, 502, "invalid_signature"},
		{"usage of another execution", func(_ crtx.CreatorRequest, hash string, key ed25519.PrivateKey) (*int64, *string) {
			n, sig := int64(10), crtx.SignUsage(key, crtx.NewUUID(), hash, 10)
			return &n, &sig
		}, 502, "invalid_signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := fault(t, func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey) {
				r := signed(req, "words", key)
				r.TokensUsed, r.UsageSignature = c.usage(req, *r.ResultHash, key)
				replyJSON(w, r)
			})
			agent := m.list(svc, "0.001", metered)
			before := m.balance(m.callerW, crtx.Devnet)
			_, err := m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
			e := wantCode(t, err, c.status, c.code)
			if e != nil && e.ExecutionID != nil {
				rec, err := m.key.Execution(ctx, *e.ExecutionID)
				if err != nil || rec.Status != crtx.ExecFailed || rec.Refunded != usdc("0.5") {
					t.Errorf("the refused call = %+v, %v; want failed, its hold of 0.5 refunded", rec, err)
				}
			}
			if after := m.balance(m.callerW, crtx.Devnet); after.Available != before.Available {
				t.Errorf("balance %s before, %s after; want nothing charged", before.Available, after.Available)
			}
		})
	}
}

// A listing is metered with all three prices, its most at or above its
// base; a listing priced per call takes neither of the others.
func TestMeteredListingRefusals(t *testing.T) {
	m := newMarket(t, "0")
	svc := newMeteredService(t, 1)
	for _, c := range []struct {
		name  string
		p     listingReq
		field string
	}{
		{"no price per 1k", params(svc, "0.001").with("pricing_model", "metered").with("max_price_per_call_usdc", json.Number("0.5")), "price_per_1k_tokens_usdc"},
		{"no most", params(svc, "0.001").with("pricing_model", "metered").with("price_per_1k_tokens_usdc", json.Number("0.1")), "max_price_per_call_usdc"},
		{"a most under the base", params(svc, "0.1").with("pricing_model", "metered").with("price_per_1k_tokens_usdc", json.Number("0.1")).
			with("max_price_per_call_usdc", json.Number("0.05")), "max_price_per_call_usdc"},
		{"per call with a price per 1k", params(svc, "0.1").with("price_per_1k_tokens_usdc", json.Number("0.1")), "price_per_1k_tokens_usdc"},
		{"another model", params(svc, "0.1").with("pricing_model", "subscription"), "pricing_model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := list(m.creatorC, c.p)
			if e := wantCode(t, err, 400, "invalid_request"); e != nil && !fieldNamed(e, c.field) {
				t.Errorf("the refusal names %v, not %s", e.Fields, c.field)
			}
		})
	}
	// While a replica of the release before is known, a metered agent
	// waits: that replica would settle its calls at the base price.
	if err := m.d.Store.Update(ctx, func(tx crtx.Tx) error {
		now := time.Now()
		return tx.System.Heartbeat(ctx, "replica-of-before", 0, now, now.Add(-time.Hour))
	}); err != nil {
		t.Fatal(err)
	}
	_, err := list(m.creatorC, params(svc, "0.001").with("pricing_model", "metered").
		with("price_per_1k_tokens_usdc", json.Number("0.1")).with("max_price_per_call_usdc", json.Number("0.5")))
	if e := wantCode(t, err, 503, "unavailable"); e != nil && !strings.Contains(e.Message, "replica-of-before") {
		t.Errorf("the refusal names not the replica: %s", e.Message)
	}
}

// fieldNamed reports whether an error names field: among its fields, or
// in its message when it is the only one.
func fieldNamed(e *client.Error, field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return len(e.Fields) == 0 && strings.HasPrefix(e.Message, field)
}

// An x402 payer of a metered agent pays its most with exact, through the
// official client; what the call did not use is in the payer's crtx
// wallet, as PAYMENT-RESPONSE, the record and the receipt say, and the
// payer reads it there with its SIGN-IN-WITH-X proof.
func TestX402Metered(t *testing.T) {
	x := newX402Market(t)
	agent := x.list(newMeteredService(t, 20_000), "0.001", map[string]any{"timeout_seconds": 5, "pricing_model": "metered",
		"price_per_1k_tokens_usdc": json.Number("0.0025"), "max_price_per_call_usdc": json.Number("0.2")})
	_, _, pr, _, _ := x.post(agent, "", run("hello"))
	if pr == nil || len(pr.Accepts) != 1 || pr.Accepts[0].Amount != "200000" {
		t.Fatalf("PAYMENT-REQUIRED of a metered agent: %+v; want its most, 200000", pr)
	}
	got := x.pay(agent, "pay", run("the sea"))
	var rec api.ExecutionRecord
	if err := json.Unmarshal(got.Body, &rec); err != nil || got.Status != 200 || rec.Status != crtx.ExecCompleted {
		t.Fatalf("paid call: %d %s", got.Status, got.Body)
	}
	sr := got.PaymentResponse
	if sr == nil || !sr.Success || sr.Amount != "200000" || sr.Extra == nil || sr.Extra.Charged != "51000" ||
		sr.Extra.Returned != "149000" || sr.Extra.ReturnedTo != x402.ReturnedToWallet {
		t.Fatalf("PAYMENT-RESPONSE: %+v %+v", sr, sr.Extra)
	}
	if rec.Cost != usdc("0.051") || rec.Metered == nil || rec.Metered.Returned != usdc("0.149") || rec.Metered.ReturnedTo == nil ||
		*rec.Metered.ReturnedTo != x.payer.address {
		t.Fatalf("the record: %s", got.Body)
	}
	if held := x.held(); held != x.start-usdc("0.2") {
		t.Errorf("the payer holds %s on the chain; want %s less the most", held, x.start)
	}
	if b := x.balance(x.payer, crtx.Devnet); b.Available != usdc("0.149") {
		t.Errorf("the payer's crtx wallet = %+v; want the unused 0.149", b)
	}
	// The payer, with no account, reads it with the official
	// sign-in-with-x client, and the receipt says the same.
	ch := x.d.Market.Accounts.SignInWithX(ctx)
	reads := x.signedReads(ch, sr.Network, x.d.URL+"/v1/wallet", x.d.URL+"/v1/executions/"+rec.ExecutionID+"/receipt")
	var w api.WalletResponse
	if err := json.Unmarshal(reads[0].Body, &w); err != nil || reads[0].Status != 200 || w.Wallet != x.payer.address ||
		len(w.Balances) != 1 || w.Balances[crtx.Devnet].Available != usdc("0.149") {
		t.Errorf("the payer's balance read with its proof: %d %s", reads[0].Status, reads[0].Body)
	}
	if rc, err := client.VerifyReceipt(reads[1].Body, x.marketKey()); err != nil || rc.Metered == nil ||
		rc.Metered.Returned != usdc("0.149") || rc.Payment == nil || rc.Payment.Amount != usdc("0.2") {
		t.Errorf("the receipt: %s %v", reads[1].Body, err)
	}
	// A most of the caller's own is for calls paid from a balance.
	lower := map[string]any{"task": "x", "max_price_usdc": 0.01}
	status, eb, _, _, _ := x.post(agent, x.pay(agent, "header", lower).Header, lower)
	if status != 400 || eb.Error.Code != crtx.CodeInvalidRequest {
		t.Errorf("max_price_usdc with x402: %d %+v", status, eb)
	}
	// A price guard below the most the payment brings is refused, unpaid.
	guarded := map[string]any{"task": "x", "max_cost_usdc": 0.1}
	status, eb, _, _, _ = x.post(agent, x.pay(agent, "header", guarded).Header, guarded)
	if status != 409 || eb.Error.Code != crtx.CodePriceChanged {
		t.Errorf("max_cost_usdc below the most with x402: %d %+v", status, eb)
	}
	x.rollup()
}

// A metered agent is listed only if its service signs its usage: the
// listing's endpoint test asks for it, as does the Test Execution tool
// when told the listing is metered.
func TestMeteredEndpointTest(t *testing.T) {
	m := newMarket(t, "0")
	key := agentKey()
	unsigned := serveAgent(t, key, creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) {
		return "words", 0, nil // no tokens reported: no usage signed
	}, creator.Options{}))
	_, err := list(m.creatorC, params(unsigned, "0.001").with("pricing_model", "metered").
		with("price_per_1k_tokens_usdc", json.Number("0.0025")).with("max_price_per_call_usdc", json.Number("0.5")))
	if e := wantCode(t, err, 422, "endpoint_unreachable"); e != nil && !strings.Contains(e.Message, "usage_signature") {
		t.Errorf("the refusal says not why: %s", e.Message)
	}
	for _, c := range []struct {
		model  string
		passes bool
	}{{"pay_per_use", true}, {"metered", false}} {
		var rep api.TestReport
		err := m.creatorC.Do(ctx, "POST", "/v1/creator/test-execution", "application/json",
			[]byte(mustJSON(map[string]any{"endpoint_url": unsigned.URL, "signing_public_key": unsigned.PubKey, "pricing_model": c.model})), &rep)
		if err != nil || rep.SignatureOK != c.passes {
			t.Errorf("the test of a service that signs no usage, for a %s listing: %+v, %v", c.model, rep, err)
		}
	}
}

// A metered agent through the other doors: MCP's run_agent and A2A's
// message metadata take max_price_usdc, and say the signed usage with the
// result; the OpenAI-compatible endpoint's usage is the signed usage.
func TestMeteredDoors(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newMeteredService(t, 20_000), "0.001", metered)

	var out struct {
		ExecutionID string           `json:"execution_id"`
		Cost        float64          `json:"cost_usdc"`
		TokensUsed  *int64           `json:"tokens_used"`
		Metered     *api.MeteredView `json:"metered"`
	}
	cs := mcpSession(t, m.env, m.key, nil)
	if msg := call(t, cs, "run_agent", map[string]any{"agent_id": agent, "task": "the sea", "max_price_usdc": 0.03}, &out); msg != "" {
		t.Fatalf("run_agent: %s", msg)
	}
	if out.Cost != 0.03 || out.TokensUsed == nil || *out.TokensUsed != 20_000 || out.Metered == nil || out.Metered.Held != usdc("0.03") ||
		out.Metered.UsageSignature == nil {
		t.Errorf("run_agent of a metered agent at most 0.03: %+v", out)
	}

	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	msg := userMessage(a2a.NewTextPart("the sea"))
	msg.Metadata = map[string]any{"max_price_usdc": "0.5"}
	task, err := c.send(msg, false)
	if err != nil {
		t.Fatal(err)
	}
	_, data := result(t, task)
	if data["cost_usdc"] != "0.051000" || data["tokens_used"] != float64(20_000) || data["usage_signature"] == nil ||
		data["held_usdc"] != "0.500000" || data["returned_usdc"] != "0.449000" {
		t.Errorf("the A2A result's settlement: %v", data)
	}
	msg = userMessage(a2a.NewTextPart("less"))
	msg.Metadata = map[string]any{"max_price_usdc": 0.5}
	_, err = c.send(msg, false)
	wantA2A(t, err, a2a.ErrInvalidParams, crtx.CodeInvalidRequest)

	body := `{"model": "` + agent + `", "messages": [{"role": "user", "content": "the sea"}], "max_price_usdc": 0.1}`
	req, _ := http.NewRequest("POST", m.d.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+m.key.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var completion struct {
		Usage struct {
			TotalTokens int64 `json:"total_tokens"`
		}
		Crtx struct {
			Cost    float64          `json:"cost_usdc"`
			Metered *api.MeteredView `json:"metered"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&completion); err != nil || resp.StatusCode != 200 || completion.Usage.TotalTokens != 20_000 ||
		completion.Crtx.Cost != 0.051 || completion.Crtx.Metered == nil || completion.Crtx.Metered.Held != usdc("0.1") ||
		completion.Crtx.Metered.UsageSignature == nil {
		t.Errorf("chat completion of a metered agent: %d %+v %v", resp.StatusCode, completion, err)
	}
	// 0.03 + 0.051 + 0.051, the unused holds back.
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9.868") || b.Escrowed != 0 {
		t.Errorf("the caller's balance = %+v", b)
	}
}
