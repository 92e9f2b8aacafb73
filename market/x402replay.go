package market

import (
	"bytes"
	"context"
	"errors"

	"github.com/crtx-market/crtx"
)

// A payment sent again: the call it paid answers only its payer.

// errClaimed is a payment whose signature another execution claimed.
var errClaimed = errors.New("the payment was claimed already")

// paidAgain answers a payment sent again after an execution claimed it.
// While that call is being settled or run, the in-progress answer. Then,
// to its payer (proven by a SIGN-IN-WITH-X proof; the payment-identifier's
// id, which never reaches the chain, was matched earlier as an
// idempotency key) the call's first answer, and to anyone else one
// refusal whatever call it asks for: a settled transaction is public on
// the chain and the fee payer's signature is the marketplace's own, so
// anyone can rebuild the header; its answer may be private, and a refusal
// that depended on the task would let a stranger guess it.
func (m *core) paidAgain(ctx context.Context, res *PaidCall, e crtx.Execution, paid Paid, a crtx.Agent, in crtx.ExecuteParams) error {
	payer := false
	if paid.SignIn != "" {
		p, err := m.market.Accounts.SignedInWithX(ctx, paid.SignIn)
		if err != nil {
			return err
		}
		payer = p.Wallet == e.Wallet && p.Signed == e.Environment
	}
	if !payer && paid.AllowReplay != nil {
		// Bounded by who sends it (the transport's choice), not by the
		// payer: a stranger's replays must not spend the payer's budget.
		if err := paid.AllowReplay(e.Wallet); err != nil {
			return err
		}
	}
	p, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Payment, error) { return tx.Funds.PaymentOf(ctx, e.ID) })
	if err != nil {
		// Never guessed: a refusal that said "never charged" of a payment
		// that was would have its payer pay again.
		return internal("payment", err)
	}
	follow := "its payer reads it with a SIGN-IN-WITH-X proof of the paying wallet (GET /v1/executions/" + e.ID + ")"
	if p.Status == crtx.PaymentVerified || p.Status == crtx.PaymentSent || (!e.Status.Final() && !e.Async) {
		return &crtx.Error{Code: crtx.CodeIdempotencyInProgress, ExecutionID: e.ID, RetryAfter: 1,
			Message: "the call this payment pays for is still being handled: " + follow}
	}
	same := e.AgentID == a.ID && e.Task == in.Task && e.Async == in.Async && bytes.Equal(e.Parameters, compactJSON(in.Parameters))
	switch {
	case payer && same:
		res.Execution, res.Settle = e, m.settleResponse(ctx, e, res.Settle.Network)
		return &crtx.Replay{Execution: e}
	case p.Status == crtx.PaymentVoid:
		return &crtx.PaymentError{Reason: "duplicate_settlement", ExecutionID: e.ID,
			Message: "this payment was claimed already, by a call that ended without it: it was never charged; sign a new one to run a call"}
	case payer:
		return &crtx.PaymentError{Reason: "duplicate_settlement", ExecutionID: e.ID,
			Message: "this payment was settled already, for another call (execution " + e.ID + "), and is charged once: sign a new one to run this call"}
	}
	return &crtx.PaymentError{Reason: "duplicate_settlement", ExecutionID: e.ID,
		Message: "this payment was settled already, once, for the call it paid: its answer goes to its payer alone; " + follow +
			", or sends this request again with the payment-identifier id it first carried or with a SIGN-IN-WITH-X header"}
}

// paidWith is the execution a payment's signature paid for.
func (m *core) paidWith(ctx context.Context, signature string) (crtx.Execution, error) {
	return crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Execution, error) {
		p, err := tx.Funds.Payment(ctx, signature)
		if err != nil {
			return crtx.Execution{}, err
		}
		return tx.Executions.Execution(ctx, p.ExecutionID)
	})
}
