package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/x402"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// run_agent on /mcp/x402: a call paid by itself, as x402's MCP transport
// says (transports-v2/mcp.md), through the same market.ExecutePaid as the
// execute endpoint's PAYMENT-SIGNATURE: the payment is checked, bounded,
// simulated and claimed with the execution, and settled after the
// creator's verified result (or, for a call that may outlive the
// transaction's blockhash, before the dispatch, refunded on failure).

// paidRunTool is run_agent as the open endpoint offers it. Its output
// schema admits the PaymentRequired too: MCP clients check an error
// result's structuredContent against it as well (the TypeScript SDK does),
// and the transport puts the PaymentRequired there.
func paidRunTool() *sdk.Tool {
	t := runTool()
	t.Description = "Run an agent on a task, paid per call with x402 (USDC on Solana), no account needed. " +
		"Called without a payment it answers the x402 PaymentRequired (an error result: structuredContent, and the same JSON as the first text); " +
		"call it again with the same arguments and the PaymentPayload in _meta[\"x402/payment\"]. " +
		"A failed run costs nothing: a short one is settled only once the agent's signed result checks out, a longer one is refunded on the chain. " +
		"Answers the result text, and the execution's id, cost, result hash, IPFS URL and ledger record, with the settlement in _meta[\"x402/payment-response\"]."
	t.OutputSchema = &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{schemaFor[runOut](), schemaFor[x402.PaymentRequired]()}}
	return t
}

// paidResource is the resource an MCP call of agent id pays for: the
// agent's execute URL, the very resource the execute endpoint names. A call
// is the same thing bought whichever transport carries it, so both
// transports ask for the same PaymentRequired (only its error differs),
// and market.Paid's check of the payload's resource holds on both.
func paidResource(publicURL, agentID string) string {
	return publicURL + "/v1/agents/" + url.PathEscape(agentID) + "/execute"
}

// runPaid answers run_agent on the open endpoint. Arguments the tool's
// schema or the agent refuse (an unknown agent, a paused one) are plain
// tool errors, as on /mcp, before any payment is asked for.
func (s *server) runPaid(ctx context.Context, req *sdk.CallToolRequest, in runIn) (*sdk.CallToolResult, any, error) {
	resource := paidResource(s.market.Config().PublicURL, in.AgentID)
	pr, err := s.market.X402.PaymentRequired(ctx, in.AgentID, resource)
	if err != nil {
		return nil, nil, s.toolError(err)
	}
	raw := req.Params.Meta[x402.MetaPayment]
	if raw == nil { // absent, or null
		price := "?"
		if p, ok := pr.Price(); ok {
			price = p.String()
		}
		pr.Error = `payment required: call run_agent again with the same arguments and the PaymentPayload in _meta["x402/payment"]`
		return paymentRequired(pr, "", crtx.Errorf(crtx.CodePaymentRequired,
			"%s costs %s USDC a call: pay it with x402 as structuredContent says, in _meta[\"x402/payment\"] of the same call "+
				"(a call that fails costs nothing), or use an API key at /mcp", pr.Resource.Description, price)), nil, nil
	}
	payload, err := readPayment(raw)
	if err != nil {
		return s.refused(pr, err, x402.PaymentPayload{}, "")
	}
	idem, hash, err := callKeys(in)
	if err != nil {
		return nil, nil, s.toolError(err)
	}
	params := crtx.ExecuteParams{Task: in.Task, Parameters: in.Parameters, TimeoutSeconds: in.TimeoutSeconds, MaxCost: in.MaxCost, MaxPrice: in.MaxPrice,
		Private: in.Private}
	// A call that asks for progress is told the result's pieces as the
	// creator writes them, as with a key; paid before the first, as a
	// REST stream is (docs/streaming.md): words are no free preview.
	tell := s.progress(ctx, req)
	defer tell.stop()
	if tell != nil {
		params.Stream, params.Deltas = true, tell.deltas
	}
	paid := market.Paid{Payload: payload, Resource: resource, Allow: s.gate.AllowPayer, AllowReplay: s.gate.AllowReplay}
	res, err := s.market.X402.ExecutePaid(ctx, in.AgentID, params, paid, idem, hash)
	var pe *crtx.PaymentError
	if errors.As(err, &pe) {
		return s.refused(pr, err, payload, res.Settle.Payer)
	}
	var replay *crtx.Replay
	if errors.As(err, &replay) || res.Execution.Status.Final() {
		// The same call again (idempotency_key, or the payment-identifier
		// extension's id): its first answer, paid once; or a call that
		// ended before it ran (its payment never landed), answered below
		// as any ended call.
		err = nil
	}
	if err != nil {
		if res.Execution.ID != "" {
			return nil, nil, s.held(err, res.Execution.ID)
		}
		return nil, nil, s.toolError(err)
	}
	// Final already, but for a replay of a call still running: followed
	// to its end either way, which also reads the result.
	e, result, err := s.market.Executions.Follow(ctx, res.Execution, nil)
	if err != nil {
		return nil, nil, s.held(err, res.Execution.ID)
	}
	tell.state(e)
	settle := res.Settle
	if e.Status != res.Execution.Status {
		settle = s.market.X402.PaymentResponse(ctx, e, settle.Network)
	}
	return s.paidAnswer(pr, e, result, settle)
}

// readPayment is _meta["x402/payment"] as a PaymentPayload, or a
// *crtx.PaymentError saying why it is none.
func readPayment(raw any) (x402.PaymentPayload, error) {
	b, err := json.Marshal(raw) // the SDK decoded _meta generically
	if err != nil {
		return x402.PaymentPayload{}, crtx.PaymentRefused("invalid_payload", "_meta[%q] is not JSON: %v", x402.MetaPayment, err)
	}
	return x402.ReadPaymentPayload(b)
}

// paidAnswer is run_agent's answer for a paid execution that ended, with
// its settlement in _meta["x402/payment-response"] ("Settlement Response
// Delivery"), on a failure too: whether the payer was charged (and will be
// refunded) or not is what a failed paid call must tell.
func (s *server) paidAnswer(pr x402.PaymentRequired, e crtx.Execution, result string, settle x402.SettleResponse) (*sdk.CallToolResult, any, error) {
	var res *sdk.CallToolResult
	switch {
	case e.Status == crtx.ExecFailed && e.ErrorCode == crtx.CodePaymentInvalid:
		// The payment did not land: "Settlement Failure" answers as
		// "Payment Required Signaling" does, and never with the tool's
		// content (the agent's result, unpaid, is withheld).
		res = paymentRequired(pr, settle.ErrorReason, s.toolError(&crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID}))
	case e.Status == crtx.ExecFailed:
		res = &sdk.CallToolResult{}
		res.SetError(s.toolError(&crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID}))
	default:
		r, out, err := s.answer(e, result)
		if err != nil {
			return nil, nil, err
		}
		r.StructuredContent = out
		res = r
	}
	res.Meta = sdk.Meta{x402.MetaPaymentResponse: settle}
	return res, nil, nil
}

// refused answers a payment refused before anything moved: x402's
// "Payment Invalid", the PaymentRequired again with the refusal's reason
// as its error, as the execute endpoint's 402 payment_invalid carries it.
// A payment that could be read also gets its failed settlement in _meta,
// as the execute endpoint's PAYMENT-RESPONSE.
func (s *server) refused(pr x402.PaymentRequired, err error, payload x402.PaymentPayload, payer string) (*sdk.CallToolResult, any, error) {
	var pe *crtx.PaymentError
	if !errors.As(err, &pe) {
		return nil, nil, s.toolError(err)
	}
	res := paymentRequired(pr, pe.Reason, pe.Err())
	if payload.X402Version != 0 {
		res.Meta = sdk.Meta{x402.MetaPaymentResponse: x402.SettleResponse{ErrorReason: pe.Reason, Network: payload.Accepted.Network, Payer: payer}}
	}
	return res, nil, nil
}

// paymentRequired is the tool result that asks for a payment: "Payment
// Required Signaling" says servers MUST answer isError with the
// PaymentRequired both as structuredContent and, JSON-encoded, as
// content[0].text. reason, if any, replaces its error. why, in words for a
// model that reads text, follows as content[1], which the transport
// leaves free.
func paymentRequired(pr x402.PaymentRequired, reason string, why error) *sdk.CallToolResult {
	if reason != "" {
		pr.Error = reason
	}
	b, err := json.Marshal(pr)
	if err != nil {
		panic(err) // a wire struct of strings and numbers
	}
	return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b),
		Content: []sdk.Content{&sdk.TextContent{Text: string(b)}, &sdk.TextContent{Text: why.Error()}}}
}
