package http

import (
	"errors"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/siwx"
	"github.com/crtx-market/crtx/x402"
)

// executePaid answers an execute request that has no API key, as x402 v2's
// HTTP transport says (transports-v2/http.md): without a PAYMENT-SIGNATURE
// header, 402 payment_required with the PAYMENT-REQUIRED header; with
// one, the call paid by it, answered as any execution with the
// PAYMENT-RESPONSE header. A refused payment is 402 payment_invalid with
// PAYMENT-REQUIRED again, its error the x402 reason; a malformed header
// is 400 ("Invalid Payment").
func (s *Server) executePaid(w http.ResponseWriter, r *http.Request) error {
	agentID := r.PathValue("agent_id")
	resource := s.market.Config().PublicURL + r.URL.Path
	pr, err := s.market.X402.PaymentRequired(r.Context(), agentID, resource)
	if err != nil {
		return err
	}
	required := func(reason string) {
		if reason != "" {
			pr.Error = reason
		}
		w.Header().Set(x402.HeaderPaymentRequired, x402.EncodeHeader(pr))
	}
	header := r.Header.Get(x402.HeaderPaymentSignature)
	if header == "" {
		required("")
		return crtx.Errorf(crtx.CodePaymentRequired, "%s costs %s USDC a call: pay with an API key (Authorization: Bearer crtx_live_… or crtx_test_…), "+
			"or per call with x402, as the PAYMENT-REQUIRED header says (a call that fails costs nothing)", pr.Resource.Description, price(pr))
	}
	payload, err := x402.DecodePaymentPayload(header)
	if err != nil {
		return err
	}
	// A payment-identifier in the payload stands for an Idempotency-Key.
	in, idem, hash, err := readExecute(r, func(string) bool { return true })
	if err != nil {
		return err
	}
	paid := market.Paid{Payload: payload, Resource: resource, Allow: s.gate.AllowPayer,
		AllowReplay: s.gate.AllowReplayFrom(r), SignIn: r.Header.Get(siwx.Header)}
	var a *streamAnswer
	finish := func() {}
	if wantsStream(r, in) {
		// Paid before its first piece: the payment's answer goes out
		// with the stream's headers.
		a = &streamAnswer{w: w}
		in.Stream = true
		in.Deltas, finish = a.relay(r.Context())
		paid.Settled = func(sr x402.SettleResponse) { w.Header().Set(x402.HeaderPaymentResponse, x402.EncodeHeader(sr)) }
	}
	res, err := s.market.X402.ExecutePaid(r.Context(), agentID, in, paid, idem, hash)
	finish()
	var pe *crtx.PaymentError
	if errors.As(err, &pe) {
		required(pe.Reason)
		w.Header().Set(x402.HeaderPaymentResponse, x402.EncodeHeader(x402.SettleResponse{ErrorReason: pe.Reason,
			Network: payload.Accepted.Network, Payer: res.Settle.Payer}))
		return err
	}
	if res.Execution.ID != "" && (a == nil || !a.started) {
		w.Header().Set(x402.HeaderPaymentResponse, x402.EncodeHeader(res.Settle))
	}
	if a != nil {
		return s.answerStream(w, r, a, res.Execution, err, res.IdempotencyKey)
	}
	return s.answerExecution(w, r, res.Execution, err, res.IdempotencyKey)
}

// signInWithX answers a fresh sign-in-with-x challenge: what the wallet
// that paid an x402 call signs to read it.
func (s *Server) signInWithX(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.market.Accounts.SignInWithX(r.Context()))
	return nil
}

// price is what the first way of paying pr asks, in USDC.
func price(pr x402.PaymentRequired) string {
	if p, ok := pr.Price(); ok {
		return p.String()
	}
	return "?"
}
