package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/crtx-market/crtx/internal/nodetest"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/x402"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolResult is an MCP tool result as the TypeScript SDK returned it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              struct {
		PaymentResponse *x402.SettleResponse `json:"x402/payment-response"`
	} `json:"_meta"`
}

// TestMCPX402TypeScriptSDK: a buyer without an account pays an agent over
// MCP with x402, using the official TypeScript MCP SDK and the official
// x402 client libraries against /mcp/x402 (testdata/mcp-x402.mjs). The
// tools list and the free tools need no payment; run_agent without one
// answers the PaymentRequired as x402's MCP transport says (an error
// result, structuredContent, the same JSON as the first text) with the
// execute endpoint's very requirements; the same call with the payment in
// _meta["x402/payment"] runs the agent and carries the settlement in
// _meta["x402/payment-response"], the chain having moved exactly the price;
// the same payment again for another call is refused and moves nothing, and payments beyond
// the marketplace's bound are refused before any simulation. The agent's
// page names the endpoint.
func TestMCPX402TypeScriptSDK(t *testing.T) {
	// One payment simulated for the whole test: the second is over the bound.
	x := newX402Market(t, func(c *daemon.Config) { c.RateLimitPayments = 0.001 })
	agent := x.list(newService(t, echo), "0.02", map[string]any{"timeout_seconds": 5})
	want := x.requirements(agent) // the execute endpoint's PAYMENT-REQUIRED
	treasury := x.treasuryHeld()
	simulations := x.chain.proxy.Calls("simulateTransaction")

	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := nodetest.ScriptOf(run, t, "mcp-x402.mjs", []nodetest.Package{
		{Modules: "CRTX_MCP_SDK", Name: "@modelcontextprotocol/sdk"},
		{Modules: "CRTX_X402", Name: "@x402/core"}, {Modules: "CRTX_X402", Name: "@x402/svm"}, {Modules: "CRTX_X402", Name: "@solana/kit"},
	}, "CRTX_URL="+x.d.URL, "CRTX_AGENT_ID="+agent, "CRTX_RPC="+x.chain.net.RPC, "CRTX_PAYER_KEYFILE="+x.keyFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("mcp-x402.mjs: %s%s", stdout.Bytes(), stderr.Bytes())
	if err != nil {
		t.Fatalf("the MCP x402 client failed: %v", err)
	}
	var out struct {
		Tools   []string
		Found   bool
		Listing struct {
			AgentID string `json:"agent_id"`
		}
		Unpaid, Paid, Replayed, Second toolResult
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the client printed %q: %v", stdout.Bytes(), err)
	}

	// Free: the list and the catalog.
	if strings.Join(out.Tools, " ") != "get_agent run_agent search_agents" || !out.Found || out.Listing.AgentID != agent {
		t.Errorf("tools %v, search found the agent: %v, get_agent: %+v", out.Tools, out.Found, out.Listing)
	}

	// Unpaid: the PaymentRequired in both forms, the execute endpoint's.
	pr := paymentRequiredOf(t, "unpaid", out.Unpaid)
	if !strings.Contains(pr.Error, `_meta["x402/payment"]`) || len(out.Unpaid.Content) < 2 ||
		!strings.Contains(out.Unpaid.Content[1].Text, "payment_required") || out.Unpaid.Meta.PaymentResponse != nil {
		t.Errorf("unpaid: error %q, content %+v, _meta %+v", pr.Error, out.Unpaid.Content, out.Unpaid.Meta)
	}
	pr.Error, want.Error = "", ""
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("run_agent's PaymentRequired\n%+v\nis not the execute endpoint's\n%+v", pr, want)
	}

	// Paid: the result, its record, and the settlement.
	paid := out.Paid
	var rec struct {
		ExecutionID   string          `json:"execution_id"`
		Status        crtx.ExecStatus `json:"status"`
		Cost          crtx.USDC       `json:"cost_usdc"`
		OnChainRecord string          `json:"on_chain_record"`
	}
	if err := json.Unmarshal(paid.StructuredContent, &rec); err != nil || paid.IsError || len(paid.Content) == 0 ||
		paid.Content[0].Text != "echo: hello" || rec.Status != crtx.ExecCompleted || rec.Cost != usdc("0.02") || rec.OnChainRecord == "" {
		t.Fatalf("paid call: %+v (%v)", paid, err)
	}
	sr := paid.Meta.PaymentResponse
	if sr == nil || !sr.Success || sr.Transaction == "" || sr.Payer != x.payer.address || sr.Network != want.Accepts[0].Network || sr.Amount != "20000" {
		t.Fatalf("x402/payment-response: %+v", sr)
	}

	// Replayed: refused as the transport answers an invalid payment.
	if pr := paymentRequiredOf(t, "replayed", out.Replayed); pr.Error != "duplicate_settlement" ||
		!strings.Contains(out.Replayed.Content[1].Text, "payment_invalid") {
		t.Errorf("replayed payment: error %q, content %+v", pr.Error, out.Replayed.Content)
	}
	if sr := out.Replayed.Meta.PaymentResponse; sr == nil || sr.Success || sr.ErrorReason != "duplicate_settlement" {
		t.Errorf("replayed payment's x402/payment-response: %+v", sr)
	}
	// Over the bound: a plain tool error, before the simulation.
	if second := out.Second; !second.IsError || len(second.Content) == 0 || !strings.HasPrefix(second.Content[0].Text, "rate_limited") {
		t.Errorf("second payment: %+v", second)
	}
	// The paid call's payment is simulated twice: when it arrives, and
	// again just before it is sent; the refused ones never are.
	if n := x.chain.proxy.Calls("simulateTransaction") - simulations; n != 2 {
		t.Errorf("%d simulations, want the paid call's two alone", n)
	}

	// The chain moved the price once, from the payer to the treasury.
	if held := x.held(); held != x.start-usdc("0.02") {
		t.Errorf("the payer holds %s, want %s less the price", held, x.start)
	}
	if held := x.treasuryHeld(); held != treasury+usdc("0.02") {
		t.Errorf("the treasury holds %s, want %s and the price", held, treasury)
	}
	x.rollup()
	if b := x.balance(x.creatorW, crtx.Devnet); b.Available <= 0 {
		t.Errorf("the creator's devnet balance %+v: its share is missing", b)
	}

	// The agent's page names the endpoint, as there is a chain to pay on.
	resp, err := x.http.Get(x.d.URL + "/agents/" + agent)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if page, _ := io.ReadAll(resp.Body); !bytes.Contains(page, []byte(api.MCPX402URL(x.d.URL))) {
		t.Errorf("the agent's page does not name %s", api.MCPX402URL(x.d.URL))
	}
}

// paymentRequiredOf reads the PaymentRequired of an x402 MCP answer,
// which the transport requires as structuredContent and, the same JSON, as
// the first text, with isError.
func paymentRequiredOf(t *testing.T, name string, r toolResult) x402.PaymentRequired {
	t.Helper()
	var structured, text x402.PaymentRequired
	if !r.IsError || len(r.Content) == 0 {
		t.Fatalf("%s: not an error result with content: %+v", name, r)
	}
	if err := json.Unmarshal(r.StructuredContent, &structured); err != nil {
		t.Fatalf("%s: structuredContent %s: %v", name, r.StructuredContent, err)
	}
	if err := json.Unmarshal([]byte(r.Content[0].Text), &text); err != nil || !reflect.DeepEqual(structured, text) {
		t.Fatalf("%s: content[0].text %q is not structuredContent %s (%v)", name, r.Content[0].Text, r.StructuredContent, err)
	}
	if structured.X402Version != 2 || len(structured.Accepts) == 0 {
		t.Fatalf("%s: not a PaymentRequired: %s", name, r.StructuredContent)
	}
	return structured
}

// TestMCPX402RetryAndFailure: a payment the official x402 client built for
// the execute endpoint pays run_agent on /mcp/x402 as well (the resource
// is the same), here with the official Go SDK: the same call sent again
// with its idempotency_key answers the first run and charges once, and a
// failing agent's call answers its error with a settlement that says
// nothing was charged.
func TestMCPX402RetryAndFailure(t *testing.T) {
	x := newX402Market(t)
	quick := map[string]any{"timeout_seconds": 5}
	agent := x.list(newService(t, echo), "0.02", quick)
	broken := x.list(newService(t, failing), "0.02", quick, map[string]any{"name": "Broken"})
	c := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: x.d.URL + "/mcp/x402"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(agent, header string, args map[string]any) (*sdk.CallToolResult, *x402.SettleResponse) {
		t.Helper()
		var payment map[string]any
		decodeHeader(t, header, &payment)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_agent", Arguments: args, Meta: sdk.Meta{"x402/payment": payment}})
		if err != nil {
			t.Fatal(err)
		}
		var sr *x402.SettleResponse
		if raw, ok := res.Meta["x402/payment-response"]; ok {
			b, _ := json.Marshal(raw)
			sr = new(x402.SettleResponse)
			if err := json.Unmarshal(b, sr); err != nil {
				t.Fatal(err)
			}
		}
		return res, sr
	}
	executionID := func(res *sdk.CallToolResult) string {
		b, _ := json.Marshal(res.StructuredContent)
		var out struct {
			ExecutionID string `json:"execution_id"`
		}
		json.Unmarshal(b, &out)
		return out.ExecutionID
	}

	args := map[string]any{"agent_id": agent, "task": "hello", "idempotency_key": "order-42"}
	header := x.pay(agent, "header", run("hello")).Header
	first, sr := call(agent, header, args)
	if first.IsError || executionID(first) == "" || sr == nil || !sr.Success {
		t.Fatalf("paid call: %+v %+v", first, sr)
	}
	again, sr2 := call(agent, header, args)
	if again.IsError || executionID(again) != executionID(first) || sr2 == nil || sr2.Transaction != sr.Transaction {
		t.Errorf("the same call again: %+v %+v, want the first run %s", again, sr2, executionID(first))
	}
	if held := x.held(); held != x.start-usdc("0.02") {
		t.Errorf("the payer holds %s, want %s less the price, once", held, x.start)
	}

	before := x.held()
	failed, sr := call(broken, x.pay(broken, "header", run("fail")).Header, map[string]any{"agent_id": broken, "task": "fail"})
	if !failed.IsError || failed.StructuredContent != nil || len(failed.Content) == 0 ||
		!strings.Contains(failed.Content[0].(*sdk.TextContent).Text, "execution") ||
		sr == nil || sr.Success || sr.ErrorReason != "execution_failed" {
		t.Errorf("failing agent: %+v %+v", failed, sr)
	}
	x.unchanged(before)
}

// Paid with x402 over /mcp/x402, a call that asks for progress is told a
// streaming creator's pieces as they come, as with a key, and is paid
// before the first: when the first piece arrives the payer's USDC has left
// already.
func TestMCPX402ProgressCarriesThePieces(t *testing.T) {
	x := newX402Market(t)
	agent := x.list(newStreamService(t, bonjour), "0.02", map[string]any{"timeout_seconds": 5})
	progress := &progressLog{}
	heldAtFirst := make(chan crtx.USDC, 1)
	onProgress := func(ctx context.Context, r *sdk.ProgressNotificationClientRequest) {
		if r.Params.Message == "Bon" {
			heldAtFirst <- x.held()
		}
		progress.add(ctx, r)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, &sdk.ClientOptions{ProgressNotificationHandler: onProgress})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: x.d.URL + "/mcp/x402"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var payment map[string]any
	decodeHeader(t, x.pay(agent, "header", run("monde")).Header, &payment)
	res, err := cs.CallTool(bounded(t), &sdk.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent_id": agent, "task": "monde"},
		Meta: sdk.Meta{"x402/payment": payment, "progressToken": "p"}})
	if err != nil || res.IsError {
		t.Fatalf("run_agent: %v %+v", err, res)
	}
	if text, _ := res.Content[0].(*sdk.TextContent); text == nil || text.Text != "Bonjour, monde" {
		t.Fatalf("run_agent answered %+v", res.Content)
	}
	if _, ok := res.Meta["x402/payment-response"]; !ok {
		t.Errorf("no payment response: %+v", res.Meta)
	}
	if got, pieces := progress.completed(); strings.Join(pieces, "|") != "Bon|jour, |monde" {
		t.Fatalf("progress %q", got)
	}
	want := x.start - usdc("0.02")
	select {
	case held := <-heldAtFirst:
		if held != want {
			t.Errorf("at the first piece the payer held %s, want %s: the call was not paid first", held, want)
		}
	default:
		t.Error("no first piece was told")
	}
	if held := x.held(); held != want {
		t.Errorf("the payer holds %s, want %s", held, want)
	}
}
