package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/internal/nodetest"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/siwx"
	"github.com/crtx-market/crtx/x402"
)

// x402Market is a marketplace whose devnet runs on a local Solana network
// of slots slow enough (50 ms: a blockhash lives 7.5 s) for a payment to
// be settled after a call's result, and a payer holding SOL and USDC on
// it, with no crtx account. The treasury keeps one nonce account: its
// withdrawals here are the refunds, one at a time.
type x402Market struct {
	*marketplace
	chain   *chainEnv
	payer   wallet
	keyFile string
	start   crtx.USDC // the payer's USDC on the chain at the start
}

func newX402Market(t *testing.T, adjust ...func(*daemon.Config)) *x402Market {
	var ce *chainEnv
	m := newMarket(t, "0", append([]func(*daemon.Config){func(c *daemon.Config) {
		ce = startChainConfig(t, c, chaintest.SlotTime(50*time.Millisecond))
		c.X402SettleAfter, c.NonceAccounts = 5*time.Second, 1
	}}, adjust...)...)
	ce.env = m.env
	t.Cleanup(ce.checkReserves)
	x := &x402Market{marketplace: m, chain: ce, payer: ce.payer(usdc("1"))}
	x.keyFile = filepath.Join(t.TempDir(), "payer.json")
	if err := keyfile.Write(x.keyFile, x.payer.key); err != nil {
		t.Fatal(err)
	}
	x.start = x.held()
	return x
}

// held is what the payer's token account holds on the chain.
func (x *x402Market) held() crtx.USDC {
	x.t.Helper()
	account, _, err := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(x.payer.address), solana.MustPublicKeyFromBase58(x.chain.mint))
	if err != nil {
		x.t.Fatal(err)
	}
	return x.chain.net.TokenBalance(x.t, account.String())
}

// treasuryHeld is what the treasury's token account holds on the chain.
func (x *x402Market) treasuryHeld() crtx.USDC {
	x.t.Helper()
	account, _, err := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(x.chain.treasury), solana.MustPublicKeyFromBase58(x.chain.mint))
	if err != nil {
		x.t.Fatal(err)
	}
	return x.chain.net.TokenBalance(x.t, account.String())
}

// paidRun is what testdata/x402-pay.mjs prints.
type paidRun struct {
	Status          int                  `json:"status"`
	Body            json.RawMessage      `json:"body"`
	PaymentResponse *x402.SettleResponse `json:"paymentResponse"`
	PaymentRequired *x402.PaymentRequired
	Header          string `json:"header"`
}

// pay runs the official x402 client against agent's execute URL with
// body, in mode "pay" (it pays and prints the answer) or "header" (it
// prints the PAYMENT-SIGNATURE header it would send).
func (x *x402Market) pay(agent, mode string, body any) paidRun {
	x.t.Helper()
	b, _ := json.Marshal(body)
	cmd := nodetest.Script(context.Background(), x.t, "CRTX_X402", "@x402/fetch", "x402-pay.mjs",
		"CRTX_URL="+x.d.URL+"/v1/agents/"+agent+"/execute", "CRTX_BODY="+string(b), "CRTX_RPC="+x.chain.net.RPC,
		"CRTX_PAYER_KEYFILE="+x.keyFile, "CRTX_X402_MODE="+mode)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	x.t.Logf("x402 client (%s): %s%s", mode, stdout.Bytes(), stderr.Bytes())
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		x.t.Fatalf("the x402 client failed: %v", err)
	}
	var out paidRun
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		x.t.Fatalf("the x402 client printed %q: %v", stdout.Bytes(), err)
	}
	return out
}

// post sends an execute request with a PAYMENT-SIGNATURE header (none if
// empty) and returns the status, the error body (if any) and the decoded
// PAYMENT-REQUIRED and PAYMENT-RESPONSE headers.
func (x *x402Market) post(agent, header string, body any) (int, api.ErrorBody, *x402.PaymentRequired, *x402.SettleResponse, []byte) {
	x.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", x.d.URL+"/v1/agents/"+agent+"/execute", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if header != "" {
		req.Header.Set(x402.HeaderPaymentSignature, header)
	}
	resp, err := x.http.Do(req)
	if err != nil {
		x.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	json.Unmarshal(raw, &eb)
	var pr *x402.PaymentRequired
	if h := resp.Header.Get(x402.HeaderPaymentRequired); h != "" {
		pr = new(x402.PaymentRequired)
		decodeHeader(x.t, h, pr)
	}
	var sr *x402.SettleResponse
	if h := resp.Header.Get(x402.HeaderPaymentResponse); h != "" {
		sr = new(x402.SettleResponse)
		decodeHeader(x.t, h, sr)
	}
	return resp.StatusCode, eb, pr, sr, raw
}

func decodeHeader(t *testing.T, h string, v any) {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("header %q: %v", h, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("header %s: %v", b, err)
	}
}

// unchanged asserts that the payer's USDC on the chain is what it was
// (before), and that the ledger holds nothing of it.
func (x *x402Market) unchanged(before crtx.USDC) {
	x.t.Helper()
	if got := x.held(); got != before {
		x.t.Errorf("the payer holds %s on the chain, want %s: it was charged", got, before)
	}
}

// failing answers the listing's test and fails every call.
func failing(_ context.Context, r creator.Request) (string, int, error) {
	if r.Test {
		return "ok", 0, nil
	}
	return "", 0, errors.New("the model is down")
}

// TestX402PaysAndSettlesAfterTheResult: an agent with an x402 wallet and
// no account pays a call with the official client (@x402/fetch and
// @x402/svm): the 402 says how, the paid retry returns the result, and the
// chain moved exactly the price from the payer to the treasury; the
// creator's share is on the ledger. A failing agent and a timing-out one
// cost the payer nothing on the chain.
func TestX402PaysAndSettlesAfterTheResult(t *testing.T) {
	x := newX402Market(t)
	// Timeouts within X402SettleAfter: settled after the result.
	quick := map[string]any{"timeout_seconds": 5}
	agent := x.list(newService(t, echo), "0.02", quick)
	// Without a key and without a payment: 402 and the requirements.
	status, eb, pr, _, _ := x.post(agent, "", run("hello"))
	if status != 402 || eb.Error.Code != crtx.CodePaymentRequired || !strings.Contains(eb.Error.Message, "API key") ||
		!strings.Contains(eb.Error.Message, "x402") || pr == nil {
		t.Fatalf("unpaid call: %d %+v %+v", status, eb, pr)
	}
	genesis := x.genesis()
	if pr.X402Version != 2 || len(pr.Accepts) != 1 || pr.Resource.URL != x.d.URL+"/v1/agents/"+agent+"/execute" ||
		pr.Resource.Description != "Word counter" {
		t.Fatalf("PAYMENT-REQUIRED: %+v", pr)
	}
	if a := pr.Accepts[0]; a.Scheme != "exact" || a.Network != "solana:"+genesis[:32] || a.Asset != x.chain.mint ||
		a.Amount != "20000" || a.PayTo != x.chain.treasury || a.Extra.FeePayer != x.chain.treasury || a.MaxTimeoutSeconds != 5 {
		t.Fatalf("accepts: %+v", a)
	}
	treasury := x.treasuryHeld()
	// The chain's finalized state lags its confirmed one by some seconds
	// on a real cluster (the local one finalizes at once): the treasury's
	// finalized balance is held where it was before the payment.
	// The proxy answers concurrent calls: the first finalized answer is
	// taken once.
	var (
		freeze sync.Once
		frozen []byte
	)
	x.chain.proxy.Set("getTokenAccountBalance", func(c chaintest.Call, forward func() []byte) ([]byte, int) {
		if params, _ := json.Marshal(c.Params); !bytes.Contains(params, []byte(`"finalized"`)) {
			return forward(), 0
		}
		freeze.Do(func() { frozen = forward() })
		return frozen, 0
	})
	if _, err := x.anon.Reserves(ctx); err != nil {
		t.Fatal(err)
	}

	// Paid with the official client: the result, and the transfer.
	got := x.pay(agent, "pay", run("hello"))
	var rec api.ExecutionRecord
	if err := json.Unmarshal(got.Body, &rec); err != nil || got.Status != 200 || rec.Status != crtx.ExecCompleted ||
		rec.Result == nil || *rec.Result != "echo: hello" {
		t.Fatalf("paid call: %d %s", got.Status, got.Body)
	}
	sr := got.PaymentResponse
	if sr == nil || !sr.Success || sr.Transaction == "" || sr.Payer != x.payer.address || sr.Network != "solana:"+genesis[:32] {
		t.Fatalf("PAYMENT-RESPONSE: %+v", sr)
	}
	// Answered once the transfer is confirmed, before it is finalized:
	// the reserves count it already, as the ledger does.
	if rs, err := x.anon.Reserves(ctx); err != nil || len(rs.Reserves) != 1 || rs.Reserves[0].Surplus < 0 {
		t.Errorf("reserves just after a paid call: %+v %v", rs, err)
	}
	x.chain.proxy.Set("getTokenAccountBalance", nil)
	if held := x.held(); held != x.start-usdc("0.02") {
		t.Errorf("the payer holds %s, want %s less the price", held, x.start)
	}
	if held := x.treasuryHeld(); held != treasury+usdc("0.02") {
		t.Errorf("the treasury holds %s, want %s and the price", held, treasury)
	}
	x.rollup()
	if b := x.balance(x.creatorW, crtx.Devnet); b.Available != rec.CreatorAmount || rec.CreatorAmount <= 0 {
		t.Errorf("the creator's devnet balance %+v, want its share %s", b, rec.CreatorAmount)
	}
	// The ledger holds the payment as a Deposit from the chain, escrowed.
	tx, err := x.anon.Transaction(ctx, crtx.Devnet, *rec.LedgerTransaction)
	if err != nil || tx.Kind != crtx.TxExecutionRecord {
		t.Fatalf("record: %+v %v", tx, err)
	}

	// A failing agent and a timing-out one: nothing charged.
	before := x.held()
	broken := x.list(newService(t, failing), "0.02", quick, map[string]any{"name": "Broken"})
	got = x.pay(broken, "pay", run("fail"))
	if got.Status != 500 || !strings.Contains(string(got.Body), "nothing was charged") ||
		got.PaymentResponse == nil || got.PaymentResponse.Success {
		t.Fatalf("failing agent: %d %s %+v", got.Status, got.Body, got.PaymentResponse)
	}
	late := x.list(fault(t, func(http.ResponseWriter, crtx.CreatorRequest, ed25519.PrivateKey) {
		time.Sleep(2500 * time.Millisecond)
	}),
		"0.02", map[string]any{"timeout_seconds": 2, "name": "Late"})
	got = x.pay(late, "pay", run("late"))
	if got.Status != 408 || !strings.Contains(string(got.Body), "nothing was charged") {
		t.Fatalf("timing-out agent: %d %s", got.Status, got.Body)
	}
	// A service that is down fails fast, with its cause, unpaid.
	down := newService(t, echo)
	gone := x.list(down, "0.02", quick, map[string]any{"name": "Gone"})
	closeService(t, down)
	got = x.pay(gone, "pay", run("anyone?"))
	if got.Status != 502 || !strings.Contains(string(got.Body), crtx.CodeAgentUnreachable) ||
		!strings.Contains(string(got.Body), "nothing was charged") {
		t.Fatalf("unreachable agent: %d %s", got.Status, got.Body)
	}
	x.unchanged(before)
}

// genesis is the local network's genesis hash.
func (x *x402Market) genesis() string {
	x.t.Helper()
	h, err := rpc.New(x.chain.net.RPC).GetGenesisHash(context.Background())
	if err != nil {
		x.t.Fatal(err)
	}
	return h.String()
}

// TestX402RefusesWhatItMustNot: a replayed payment header, one built for
// another agent or amount, and transactions breaking the exact scheme's
// rules are refused with a clear error, and move nothing; the rules'
// checks cost no RPC call.
func TestX402RefusesWhatItMustNot(t *testing.T) {
	x := newX402Market(t)
	agent := x.list(newService(t, echo), "0.02")
	dear := x.list(newService(t, echo), "0.05")
	twin := x.list(newService(t, echo), "0.02")

	h := x.pay(agent, "header", run("once")).Header
	// A private call: its result is published nowhere, and read by its
	// payer alone.
	if status, _, _, sr, _ := x.post(agent, h, crtx.ExecuteParams{Task: "once", Private: true}); status != 200 || sr == nil || !sr.Success {
		t.Fatalf("first use: %d %+v", status, sr)
	}
	paid := x.held()
	if paid != x.start-usdc("0.02") {
		t.Fatalf("the payer holds %s after one call", paid)
	}
	refused := func(name, agent, header, reason string) {
		t.Helper()
		status, eb, pr, _, _ := x.post(agent, header, run("once"))
		if status != 402 || eb.Error.Code != crtx.CodePaymentInvalid || !strings.Contains(eb.Error.Message, reason) ||
			pr == nil || pr.Error != reason || !strings.Contains(eb.Error.Message, "nothing was charged") {
			t.Errorf("%s: %d %+v %+v, want 402 payment_invalid %s, nothing charged", name, status, eb, pr, reason)
		}
	}
	// The same header again (anyone can rebuild it from the chain) reveals
	// nothing of the call it paid, whatever call it asks for: one refusal,
	// which says the payment was charged once and how its payer reads it.
	paidAgain := func(p crtx.ExecuteParams) api.ErrorBody {
		t.Helper()
		status, eb, pr, _, body := x.post(agent, h, p)
		if status != 402 || eb.Error.Code != crtx.CodePaymentInvalid || pr == nil || pr.Error != "duplicate_settlement" ||
			strings.Contains(string(body), "echo: once") || strings.Contains(eb.Error.Message, "nothing was charged") ||
			!strings.Contains(eb.Error.Message, "SIGN-IN-WITH-X") || eb.Error.ExecutionID == nil {
			t.Errorf("the same payment again for %q: %d %s", p.Task, status, body)
		}
		return eb
	}
	if same, other := paidAgain(run("once")), paidAgain(run("another")); same.Error.Message != other.Error.Message {
		t.Errorf("a replay tells the paid task from another:\n%s\n%s", same.Error.Message, other.Error.Message)
	}
	if got := x.held(); got != paid {
		t.Errorf("the same payment again moved money: the payer holds %s, want %s", got, paid)
	}
	// Its payer, signed in with its wallet, gets the call's first answer
	// again (its answer was lost), and pays nothing more; for another
	// call it is refused.
	var payload x402.PaymentPayload
	decodeHeader(t, h, &payload)
	signed, err := x.anon.SignInWithX(ctx, x.payer.key, payload.Accepted.Network)
	if err != nil {
		t.Fatal(err)
	}
	if rec, sr, err := signed.ExecutePaid(ctx, agent, run("once"), payload, ""); err != nil || !sr.Success ||
		rec.Result == nil || *rec.Result != "echo: once" {
		t.Errorf("the same payment again from its payer: %+v %+v %v", rec, sr, err)
	}
	_, _, err = signed.ExecutePaid(ctx, agent, run("another"), payload, "")
	if ce := wantCode(t, err, 402, crtx.CodePaymentInvalid); ce != nil &&
		(!strings.Contains(ce.Message, "another call") || strings.Contains(ce.Message, "nothing was charged")) {
		t.Errorf("the same payment for another call, from its payer: %v", err)
	}
	if got := x.held(); got != paid {
		t.Errorf("the same payment again moved money: the payer holds %s, want %s", got, paid)
	}
	// Built for the cheaper agent, and claiming to be for the dearer one.
	forDear := x.retarget(x.pay(agent, "header", run("once")).Header, dear)
	refused("another amount", dear, forDear, "invalid_exact_svm_payload_amount_mismatch")
	refused("another agent", twin, x.pay(agent, "header", run("once")).Header, "invalid_payload_resource_mismatch")

	// Transactions that break one rule each, built as the client would
	// but for that rule, are refused before any RPC call.
	pr := x.requirements(agent)
	calls := x.chain.proxy.Calls("simulateTransaction")
	other := chaintest.Address(chaintest.NewKey(t))
	fee := solana.MustPublicKeyFromBase58(x.chain.treasury)
	for _, c := range []struct {
		name, reason string
		change       func(p *chaintest.Payment)
	}{
		{"fee payer as source", "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts", func(p *chaintest.Payment) {
			p.Instructions[2] = chaintest.TransferChecked(20_000, fee, solana.MustPublicKeyFromBase58(x.chain.mint), fee, solana.MustPublicKeyFromBase58(x.payer.address))
		}},
		{"extra instruction", "invalid_exact_svm_payload_unknown_fifth_instruction", func(p *chaintest.Payment) {
			p.Instructions = append(p.Instructions, p.Transfer(t, other, 1))
		}},
		{"wrong destination", "invalid_exact_svm_payload_recipient_mismatch", func(p *chaintest.Payment) {
			p.Instructions[2] = p.Transfer(t, other, 20_000)
		}},
		{"excessive compute price", "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high", func(p *chaintest.Payment) {
			p.Instructions[1] = chaintest.ComputeBudget(3, 50_000_000, 8)
		}},
	} {
		p := chaintest.NewPayment(t, x.chain.treasury, x.payer.key, x.chain.mint, x.chain.treasury, 20_000)
		c.change(p)
		refused(c.name, agent, x.header(pr, p.Encode(t, x.chain.net.Blockhash(t))), c.reason)
	}
	if n := x.chain.proxy.Calls("simulateTransaction"); n != calls {
		t.Errorf("the refused payments cost %d simulations", n-calls)
	}
	// A payment the chain would refuse (more than the payer holds) is
	// refused by the simulation, before the call.
	// A payer without a USDC token account, and one holding too little,
	// are told so in words, with the way to get USDC.
	broke := chaintest.NewPayment(t, x.chain.treasury, chaintest.NewKey(t), x.chain.mint, x.chain.treasury, 20_000)
	refused("no token account", agent, x.header(pr, broke.Encode(t, x.chain.net.Blockhash(t))), "insufficient_funds")
	poor := chaintest.NewKey(t)
	x.chain.net.MintTo(t, x.chain.mint, x.chain.mintAuth, chaintest.Address(poor), usdc("0.01"))
	short := chaintest.NewPayment(t, x.chain.treasury, poor, x.chain.mint, x.chain.treasury, 20_000)
	refused("too little", agent, x.header(pr, short.Encode(t, x.chain.net.Blockhash(t))), "insufficient_funds")
	for payer, words := range map[*chaintest.Payment]string{broke: "has no USDC token account", short: "holds 0.01 USDC"} {
		_, eb, _, _, _ := x.post(agent, x.header(pr, payer.Encode(t, x.chain.net.Blockhash(t))), run("once"))
		if !strings.Contains(eb.Error.Message, words) || !strings.Contains(eb.Error.Message, "send USDC to the payer's wallet") ||
			strings.Contains(eb.Error.Message, "InstructionError") {
			t.Errorf("a payer without the USDC: %q, want it to say %q and how to get USDC", eb.Error.Message, words)
		}
	}
	if got := x.held(); got != paid {
		t.Errorf("the refusals moved money: the payer holds %s, want %s", got, paid)
	}

	// One payment sent twenty times at once: one call, charged once. The
	// others are told it is in progress (or, once it ended, that it was
	// charged once), or to slow down; none that nothing was charged,
	// which would have an honest client pay again.
	slow := x.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			time.Sleep(time.Second) // long enough for the other sends to find it running
		}
		return "echo: " + r.Task, 0, nil
	}), "0.02", map[string]any{"name": "Slow"})
	h = x.pay(slow, "header", run("twenty")).Header
	type answer struct {
		status int
		eb     api.ErrorBody
		body   []byte
	}
	answers := make(chan answer, 20)
	for range 20 {
		go func() {
			status, eb, _, _, body := x.post(slow, h, run("twenty"))
			answers <- answer{status, eb, body}
		}()
	}
	ran, running := 0, 0
	for range 20 {
		a := <-answers
		switch {
		case a.status == 200 && strings.Contains(string(a.body), "echo: twenty"):
			ran++
		case strings.Contains(a.eb.Error.Message, "nothing was charged"):
			t.Errorf("a send of a payment that was charged says nothing was: %d %s", a.status, a.body)
		case a.status == 409 && a.eb.Error.Code == crtx.CodeIdempotencyInProgress && a.eb.Error.ExecutionID != nil:
			running++
		case a.status == 402 && strings.Contains(a.eb.Error.Message, "duplicate_settlement") && a.eb.Error.ExecutionID != nil,
			a.status == 429:
		default:
			t.Errorf("a send of a payment sent twenty times: %d %s", a.status, a.body)
		}
	}
	if got := x.held(); ran != 1 || running == 0 || got != paid-usdc("0.02") {
		t.Errorf("one payment sent twenty times ran %d calls, %d sends told it was in progress; the payer holds %s, want %s",
			ran, running, got, paid-usdc("0.02"))
	}
}

// retarget rewrites a payment header's resource to agent's execute URL,
// leaving the transaction as it was signed.
func (x *x402Market) retarget(header, agent string) string {
	x.t.Helper()
	var p x402.PaymentPayload
	decodeHeader(x.t, header, &p)
	p.Resource.URL = x.d.URL + "/v1/agents/" + agent + "/execute"
	return x402.EncodeHeader(p)
}

// requirements is agent's PAYMENT-REQUIRED.
func (x *x402Market) requirements(agent string) x402.PaymentRequired {
	x.t.Helper()
	_, _, pr, _, _ := x.post(agent, "", run("x"))
	if pr == nil {
		x.t.Fatal("no PAYMENT-REQUIRED")
	}
	return *pr
}

// header is the PAYMENT-SIGNATURE header carrying transaction for pr's
// first way to pay.
func (x *x402Market) header(pr x402.PaymentRequired, transaction string) string {
	p := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
	p.Payload.Transaction = transaction
	return x402.EncodeHeader(p)
}

// TestX402AsyncFailureIsRefundedOnChain: an asynchronous call is settled
// into the escrow before its dispatch; when it fails, the escrow goes back
// to the payer's token account on the chain, once.
func TestX402AsyncFailureIsRefundedOnChain(t *testing.T) {
	x := newX402Market(t)
	broken := x.list(newService(t, failing), "0.02")
	got := x.pay(broken, "pay", crtx.ExecuteParams{Task: "later", Async: true})
	var acc api.Accepted
	if err := json.Unmarshal(got.Body, &acc); err != nil || got.Status != 202 || acc.ExecutionID == "" ||
		got.PaymentResponse == nil || !got.PaymentResponse.Success {
		t.Fatalf("async call: %d %s %+v", got.Status, got.Body, got.PaymentResponse)
	}
	// Settled first: the payment landed before the dispatch (its refund
	// may already be on its way).
	st, err := rpc.New(x.chain.net.RPC).GetSignatureStatuses(ctx, true, solana.MustSignatureFromBase58(got.PaymentResponse.Transaction))
	if err != nil || len(st.Value) != 1 || st.Value[0] == nil || st.Value[0].Err != nil {
		t.Fatalf("the payment %s on the chain: %+v %v", got.PaymentResponse.Transaction, st, err)
	}
	x.refunded(acc.ExecutionID)

	// The payer, with no account, follows the call by signing the
	// pending answer's challenge with the official sign-in-with-x client.
	if acc.Poll == nil || acc.Poll.SignInWithX == nil || acc.Poll.URL != x.d.URL+"/v1/executions/"+acc.ExecutionID {
		t.Fatalf("the pending answer says not how to poll: %s", got.Body)
	}
	reads := x.signedReads(*acc.Poll.SignInWithX, got.PaymentResponse.Network, acc.Poll.URL, acc.Poll.URL+"/receipt")
	var rec api.ExecutionRecord
	if err := json.Unmarshal(reads[0].Body, &rec); err != nil || reads[0].Status != 200 || rec.Status != crtx.ExecFailed ||
		rec.Payment == nil || rec.Payment.Status != crtx.PaymentSettled || rec.Payment.Transaction == nil ||
		*rec.Payment.Transaction != got.PaymentResponse.Transaction || rec.Payment.Refund == nil ||
		rec.Payment.Refund.Status != crtx.WithdrawalConfirmed || rec.Refunded != usdc("0.02") {
		t.Fatalf("the record read by its payer: %d %s", reads[0].Status, reads[0].Body)
	}
	rc, err := client.VerifyReceipt(reads[1].Body, x.marketKey())
	if err != nil || reads[1].Status != 200 || rc.Payment == nil ||
		rc.Payment.Transaction != got.PaymentResponse.Transaction || rc.Payment.Payer != x.payer.address ||
		rc.Payment.Amount != usdc("0.02") || rc.Payment.RefundWithdrawal == nil {
		t.Fatalf("the receipt read by its payer: %d %s %v", reads[1].Status, reads[1].Body, err)
	}
	// Another wallet's proof reads nothing of it; a forged one is refused.
	payer, keyFile := x.payer, x.keyFile
	x.payer, x.keyFile = newWallet(t), filepath.Join(t.TempDir(), "stranger.json")
	if err := keyfile.Write(x.keyFile, x.payer.key); err != nil {
		t.Fatal(err)
	}
	if r := x.signedReads(x.d.Market.Accounts.SignInWithX(ctx), got.PaymentResponse.Network, acc.Poll.URL)[0]; r.Status != 404 {
		t.Errorf("another wallet read the call: %d %s", r.Status, r.Body)
	}
	x.payer, x.keyFile = payer, keyFile
	req, _ := http.NewRequest("GET", acc.Poll.URL, nil)
	req.Header.Set(siwx.Header, x402.EncodeHeader(siwx.Payload{Info: acc.Poll.SignInWithX.Info,
		Address: x.payer.address, ChainID: got.PaymentResponse.Network, Type: "ed25519", Signature: "1111"}))
	if resp, err := x.http.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("a forged proof: %v %v", resp, err)
	}
	// A proof the wallet signed for another resource of the marketplace.
	other := siwx.Payload{Info: x.d.Market.Accounts.SignInWithX(ctx).Info, Address: x.payer.address,
		ChainID: got.PaymentResponse.Network, Type: "ed25519", SignatureScheme: "siws"}
	other.URI = x.d.URL + "/v1/agents"
	other.Signature = crtx.SignBase58(x.payer.key, []byte(other.Message()))
	req.Header.Set(siwx.Header, x402.EncodeHeader(other))
	if resp, err := x.http.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("a proof signed for another URI: %v %v", resp, err)
	}
	// A synchronous call settled first (its timeout outlives the bound for
	// settling after the result) that fails: its answer and its
	// PAYMENT-RESPONSE name the refund, not only a success.
	got = x.pay(broken, "pay", run("now"))
	var eb api.ErrorBody
	if err := json.Unmarshal(got.Body, &eb); err != nil || eb.Error.ExecutionID == nil {
		t.Fatalf("a failed call settled first: %d %s", got.Status, got.Body)
	}
	refund := "wd_refund_" + *eb.Error.ExecutionID
	if sr := got.PaymentResponse; got.Status != 500 || sr == nil || !sr.Success || sr.Extra == nil || sr.Extra.Refund != refund ||
		!strings.Contains(eb.Error.Message, refund) {
		t.Errorf("a failed call settled first: %d %s %+v", got.Status, got.Body, got.PaymentResponse)
	}
	x.refunded(*eb.Error.ExecutionID)
	// Without any credential, the refusal tells a payer how to read it.
	_, err = x.anon.Execution(ctx, acc.ExecutionID)
	if ce := wantCode(t, err, 401, crtx.CodeAuthenticationRequired); !strings.Contains(ce.Message, "SIGN-IN-WITH-X") {
		t.Errorf("an execution read without a credential: %v", err)
	}
}

// marketKey is the marketplace's signing key, from /.well-known/crtx.json.
func (x *x402Market) marketKey() ed25519.PublicKey {
	x.t.Helper()
	wk, err := x.anon.WellKnown(ctx)
	if err != nil {
		x.t.Fatal(err)
	}
	pub, err := crtx.ParseAddress("signing_public_key", wk.SigningPublicKey)
	if err != nil {
		x.t.Fatal(err)
	}
	return pub
}

// signedRead is one GET of testdata/x402-siwx.mjs.
type signedRead struct {
	URL    string          `json:"url"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// signedReads GETs urls as the payer signed in with challenge on network,
// with the official sign-in-with-x client.
func (x *x402Market) signedReads(challenge siwx.Extension, network string, urls ...string) []signedRead {
	x.t.Helper()
	ch, _ := json.Marshal(challenge)
	cmd := nodetest.Script(context.Background(), x.t, "CRTX_X402", "@x402/extensions", "x402-siwx.mjs",
		"CRTX_CHALLENGE="+string(ch), "CRTX_NETWORK="+network, "CRTX_URLS="+strings.Join(urls, ","), "CRTX_PAYER_KEYFILE="+x.keyFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	x.t.Logf("sign-in-with-x client: %s%s", stdout.Bytes(), stderr.Bytes())
	if err != nil {
		x.t.Fatalf("the sign-in-with-x client failed: %v", err)
	}
	var out []signedRead
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(urls) {
		x.t.Fatalf("the sign-in-with-x client printed %q: %v", stdout.Bytes(), err)
	}
	return out
}

// refunded waits until the refund of execution id is confirmed on the
// chain and the payer holds what it started with.
func (x *x402Market) refunded(id string) {
	x.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		w, err := x.d.Market.Funds.Withdrawal(ctx, x.payer.address, "wd_refund_"+id)
		if err == nil && w.Status == crtx.WithdrawalConfirmed {
			break
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("refund of %s: %+v %v", id, w, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if held := x.held(); held != x.start {
		x.t.Errorf("after the refund the payer holds %s, want %s", held, x.start)
	}
	if b := x.balance(x.payer, crtx.Devnet); b.Available != 0 {
		x.t.Errorf("the payer's ledger wallet holds %+v: the refund stayed on the ledger", b)
	}
}

// TestX402IdempotencyAndLimits: the payment-identifier extension is an
// Idempotency-Key in the payer's wallet (a retry, even with a new payment,
// answers the first response and pays nothing again; another body is a
// conflict), and payments that would cost a simulation are rate-limited
// per payer address.
func TestX402IdempotencyAndLimits(t *testing.T) {
	x := newX402Market(t, func(c *daemon.Config) { c.RateLimitIP = 5 })
	agent := x.list(newService(t, echo), "0.02", map[string]any{"timeout_seconds": 5})
	pr := x.requirements(agent)
	withID := func(id string) string {
		p := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0],
			Extensions: map[string]json.RawMessage{"payment-identifier": json.RawMessage(`{"info":{"required":false,"id":"` + id + `"}}`)}}
		pay := chaintest.NewPayment(t, x.chain.treasury, x.payer.key, x.chain.mint, x.chain.treasury, 20_000)
		p.Payload.Transaction = pay.Encode(t, x.chain.net.Blockhash(t))
		return x402.EncodeHeader(p)
	}
	status, _, _, sr, first := x.post(agent, withID("pay_0123456789abcdef"), run("once"))
	if status != 200 || sr == nil || !sr.Success {
		t.Fatalf("first call: %d %s", status, first)
	}
	status, _, _, _, again := x.post(agent, withID("pay_0123456789abcdef"), run("once"))
	var a, b api.ExecutionRecord
	json.Unmarshal(first, &a)
	json.Unmarshal(again, &b)
	if status != 200 || b.ExecutionID != a.ExecutionID {
		t.Fatalf("retry with the same payment id: %d %s, want the first answer %s", status, again, a.ExecutionID)
	}
	if held := x.held(); held != x.start-usdc("0.02") {
		t.Errorf("the payer holds %s after a call and its retry: it paid twice", held)
	}
	if status, eb, _, _, _ := x.post(agent, withID("pay_0123456789abcdef"), run("another")); status != 409 || eb.Error.Code != "idempotency_key_reused" {
		t.Errorf("the same payment id with another body: %d %+v", status, eb)
	}
	if status, eb, _, _, _ := x.post(agent, withID("short"), run("x")); status != 400 || eb.Error.Code != "invalid_request" {
		t.Errorf("a malformed payment id: %d %+v", status, eb)
	}

	// A payer without funds: each payment costs a simulation, so its
	// address is held to its rate (5 a second, bursts of 10): of 20 at
	// once, some are refused before the simulation.
	broke := chaintest.NewKey(t)
	hash := x.chain.net.Blockhash(t)
	limited := 0
	for i := range 20 {
		p := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
		p.Payload.Transaction = chaintest.NewPayment(t, x.chain.treasury, broke, x.chain.mint, x.chain.treasury, 20_000).Encode(t, hash)
		status, eb, _, _, _ := x.post(agent, x402.EncodeHeader(p), run("x"))
		switch {
		case status == 429:
			limited++
		case status != 402 || eb.Error.Code != crtx.CodePaymentInvalid || i < 10 && limited > 0:
			t.Errorf("payment %d of an address without funds: %d %+v", i, status, eb)
		}
	}
	if limited == 0 {
		t.Error("20 payments at once from one address were all simulated")
	}
}

// TestX402SettlementThroughAnOutage: the chain stops answering while an
// asynchronous call's payment is being settled: the payer is told to
// follow the call by its id, and once the chain answers again any process
// settles the payment (it landed) and runs the call, charged once.
func TestX402SettlementThroughAnOutage(t *testing.T) {
	x := newX402Market(t, func(c *daemon.Config) { c.Lease, c.RecoveryInterval = time.Second, 100*time.Millisecond })
	agent := x.list(newService(t, echo), "0.02")
	pr := x.requirements(agent)
	down := func(chaintest.Call, func() []byte) ([]byte, int) {
		return []byte("down"), http.StatusServiceUnavailable
	}
	x.chain.proxy.Set("getBlockHeight", down)
	p := chaintest.NewPayment(t, x.chain.treasury, x.payer.key, x.chain.mint, x.chain.treasury, 20_000)
	status, eb, _, _, _ := x.post(agent, x.header(pr, p.Encode(t, x.chain.net.Blockhash(t))), crtx.ExecuteParams{Task: "through", Async: true})
	if status != 503 || eb.Error.ExecutionID == nil || !strings.Contains(eb.Error.Message, "follow execution") {
		t.Fatalf("settling through an outage: %d %+v", status, eb)
	}
	x.chain.proxy.Set("getBlockHeight", nil)
	x.clock.Advance(2 * time.Second) // the lease of the call left waiting runs out
	id := *eb.Error.ExecutionID
	deadline := time.Now().Add(60 * time.Second)
	for {
		e, _, err := x.d.Market.Executions.GetExecution(ctx, crtx.Principal{Wallet: x.payer.address, Signed: crtx.Devnet}, id)
		if err == nil && e.Status == crtx.ExecCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s after the outage: %+v %v", id, e, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if held := x.held(); held != x.start-usdc("0.02") {
		t.Errorf("the payer holds %s after one call through an outage", held)
	}
}

// TestX402PayerWhoSpendsItsFundsGetsNoResult: a payer that moves its USDC
// away while the agent works gets no result: the payment, simulated again
// before it leaves, is never sent, so the treasury pays no fee for it and
// nobody is charged.
func TestX402PayerWhoSpendsItsFundsGetsNoResult(t *testing.T) {
	x := newX402Market(t)
	sink := chaintest.NewKey(t)
	x.chain.net.MintTo(t, x.chain.mint, x.chain.mintAuth, chaintest.Address(sink), 1)
	mint := solana.MustPublicKeyFromBase58(x.chain.mint)
	owner := solana.MustPublicKeyFromBase58(x.payer.address)
	src, _, _ := solana.FindAssociatedTokenAddress(owner, mint)
	dst, _, _ := solana.FindAssociatedTokenAddress(solana.PrivateKey(sink).PublicKey(), mint)
	agent := x.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			x.chain.net.Send(t, []solana.Instruction{chaintest.TransferChecked(uint64(x.held()), src, mint, dst, owner)}, x.payer.key)
		}
		return "worked", 0, nil
	}), "0.02", map[string]any{"timeout_seconds": 5, "name": "Spent"})
	treasury := x.treasuryHeld()
	var treasurySOL uint64
	if b, err := rpc.New(x.chain.net.RPC).GetBalance(ctx, solana.MustPublicKeyFromBase58(x.chain.treasury), rpc.CommitmentConfirmed); err == nil {
		treasurySOL = b.Value
	}
	got := x.pay(agent, "pay", run("spend"))
	if got.Status != 402 || !strings.Contains(string(got.Body), "would no longer land") || strings.Contains(string(got.Body), "worked") ||
		got.PaymentResponse == nil || got.PaymentResponse.Success {
		t.Fatalf("a payer without funds at the settlement: %d %s %+v", got.Status, got.Body, got.PaymentResponse)
	}
	if held := x.treasuryHeld(); held != treasury {
		t.Errorf("the treasury holds %s, want %s: a payment moved", held, treasury)
	}
	if b, err := rpc.New(x.chain.net.RPC).GetBalance(ctx, solana.MustPublicKeyFromBase58(x.chain.treasury), rpc.CommitmentConfirmed); err != nil || b.Value != treasurySOL {
		t.Errorf("the treasury's SOL went from %d to %v (%v): it paid a fee for a payment bound to fail", treasurySOL, b, err)
	}
}

// TestX402HiddenStatusIsNeverKept: a node that hides a payment's status
// until its blockhash expires makes crtx let the payment go as never
// landed (the caller is told nothing was charged); the transfer that did
// land is then no payment of crtx's, and the operator's list of
// unattributed transfers shows it, to return by hand (the treasury holds
// it: the reserves' surplus).
func TestX402HiddenStatusIsNeverKept(t *testing.T) {
	x := newX402Market(t)
	agent := x.list(newService(t, echo), "0.02", map[string]any{"timeout_seconds": 5})
	x.chain.proxy.Set("getSignatureStatuses", chaintest.HideStatuses(func(string) bool { return true }))
	got := x.pay(agent, "pay", run("hidden"))
	// Settled first, an asynchronous call whose payment is taken for never
	// landed is answered so, not as pending.
	later := x.pay(agent, "pay", crtx.ExecuteParams{Task: "hidden, later", Async: true})
	x.chain.proxy.Set("getSignatureStatuses", nil)
	if got.Status != 402 || !strings.Contains(string(got.Body), "did not land") || got.PaymentResponse == nil || got.PaymentResponse.Success {
		t.Fatalf("a payment whose status was hidden: %d %s", got.Status, got.Body)
	}
	if later.Status != 402 || !strings.Contains(string(later.Body), "did not land") || later.PaymentResponse == nil || later.PaymentResponse.Success {
		t.Fatalf("an asynchronous call's payment whose status was hidden: %d %s", later.Status, later.Body)
	}
	if held := x.held(); held != x.start-usdc("0.04") {
		t.Fatalf("the payer holds %s: the two hidden payments should have landed", held)
	}
	un, err := x.admin.Unattributed(ctx, crtx.Devnet, 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range un.Transfers {
		found = found || (tr.Amount == usdc("0.02") && tr.From == x.payer.address)
	}
	if !found {
		t.Errorf("the landed transfer of a payment let go is not among the unattributed: %+v", un.Transfers)
	}
}

// TestX402FailingAgentIsPaidFirstNoMore: each call paid before it runs
// that fails costs the fee payer its payment's and its refund's fees, and
// its payer nothing. Once an agent's recent calls paid that way mostly
// failed, it is paid first no more: such a call is refused before
// anything costs an RPC call, while a synchronous call short enough to be
// paid after its result still runs (and, failing, costs nobody anything).
// /metrics counts the refunds and the refusals.
func TestX402FailingAgentIsPaidFirstNoMore(t *testing.T) {
	x := newX402Market(t)
	broken := x.list(newService(t, failing), "0.02")
	for i := range 3 {
		got := x.pay(broken, "pay", crtx.ExecuteParams{Task: "fail " + strconv.Itoa(i), Async: true})
		var acc api.Accepted
		if err := json.Unmarshal(got.Body, &acc); err != nil || got.Status != 202 {
			t.Fatalf("async call %d: %d %s", i, got.Status, got.Body)
		}
		x.refunded(acc.ExecutionID)
	}
	simulations := x.chain.proxy.Calls("simulateTransaction")
	got := x.pay(broken, "pay", crtx.ExecuteParams{Task: "once more", Async: true})
	if got.Status != 503 || !strings.Contains(string(got.Body), "3 of the 3 x402 calls") ||
		!strings.Contains(string(got.Body), "nothing was charged") {
		t.Errorf("a fourth call paid first: %d %s", got.Status, got.Body)
	}
	if n := x.chain.proxy.Calls("simulateTransaction"); n != simulations {
		t.Errorf("the refused call cost %d simulations", n-simulations)
	}
	x.unchanged(x.start)
	// Paid after its result, a short synchronous call still runs.
	five := 5
	got = x.pay(broken, "pay", crtx.ExecuteParams{Task: "short", TimeoutSeconds: &five})
	if got.Status != 500 || !strings.Contains(string(got.Body), "the model is down") || !strings.Contains(string(got.Body), "nothing was charged") {
		t.Errorf("a short synchronous call: %d %s", got.Status, got.Body)
	}
	x.unchanged(x.start)
	_, metrics := x.scrape(x.d.URL + "/metrics")
	for _, want := range []string{"crtx_x402_paid_first_refused_total 1\n", "crtx_x402_paid_first_refunds_total 3\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %q", strings.TrimSpace(want))
		}
	}
}

// TestX402SettlesAfterWithinTheChainsBlockhashLife: a call is settled
// after its result only if its payment's blockhash outlives it on the
// chain in use. Here a blockhash lives 7.5 s (150 blocks of 50 ms) while
// --x402-settle-after allows 30 s: once the marketplace has measured the
// chain's blocks, a synchronous call of 10 s is settled first (so a result
// is never withheld for a payment that expired), and refunded when it
// fails, as its answer says. (10 s, not just over the bound's 5.6 s: a
// loaded machine's slots run slower than asked, which lengthens it.)
func TestX402SettlesAfterWithinTheChainsBlockhashLife(t *testing.T) {
	x := newX402Market(t, func(c *daemon.Config) { c.X402SettleAfter = 30 * time.Second })
	broken := x.list(newService(t, failing), "0.02", map[string]any{"timeout_seconds": 10})
	x.requirements(broken)
	start := x.chain.net.BlockHeight(t)
	waitUntil(t, func() bool { return x.chain.net.BlockHeight(t) >= start+60 })
	got := x.pay(broken, "pay", run("ten seconds at most"))
	var eb api.ErrorBody
	if err := json.Unmarshal(got.Body, &eb); err != nil || got.Status != 500 || eb.Error.ExecutionID == nil ||
		!strings.Contains(eb.Error.Message, "wd_refund_"+*eb.Error.ExecutionID) || got.PaymentResponse == nil || !got.PaymentResponse.Success {
		t.Fatalf("a 10 s call on a chain whose blockhash lives 7.5 s was not settled first: %d %s %+v", got.Status, got.Body, got.PaymentResponse)
	}
	x.refunded(*eb.Error.ExecutionID)
}
