package market

import (
	"context"

	"github.com/crtx-market/crtx"
)

// A scheme is one way of paying for a call. Every execution takes one
// path, whatever pays for it: built by newExecution, opened with what holds
// its price, run by run and closed by finish; at each step that touches
// money, the path asks the execution's scheme:
//
//   - ledger: a wallet's balance, spent with an API key. Held in escrow as
//     the call opens (Store.OpenExecution), paid out or returned as it
//     closes (Store.CloseExecution); a pending call may be cancelled.
//   - exact: an x402 payment, checked and claimed as the call opens
//     (X402.ExecutePaid), settled on the chain before the dispatch or after
//     the result, and refunded there when the call fails (x402settle.go).
type scheme interface {
	// ready settles what e's payment owes before e may be dispatched, and
	// reports whether it may; when it may not, e is returned as it ended
	// (or as it is, for a later turn). fresh is true for the request that
	// opened e.
	ready(ctx context.Context, e crtx.Execution, fresh bool) (crtx.Execution, bool)
	// close writes the last transaction of an execution, c, whose outcome
	// is o; false, writing nothing, when it was final already.
	close(ctx context.Context, c *crtx.Closing, o outcome) (bool, error)
	// cancellable refuses the cancellation of e, or is nil when a pending
	// e may be cancelled.
	cancellable(e crtx.Execution) error
}

// schemeOf is the scheme that pays for e.
func (m *core) schemeOf(e crtx.Execution) scheme {
	if e.PaidByX402() {
		return exact{m}
	}
	return ledger{m}
}

// ledger is the scheme of a wallet's balance.
type ledger struct{ m *core }

func (ledger) ready(_ context.Context, e crtx.Execution, _ bool) (crtx.Execution, bool) {
	return e, true
}

func (s ledger) close(ctx context.Context, c *crtx.Closing, _ outcome) (bool, error) {
	return s.m.store.CloseExecution(ctx, c)
}

func (ledger) cancellable(crtx.Execution) error { return nil }

// exact is the scheme of an x402 payment.
type exact struct{ m *core }

func (s exact) ready(ctx context.Context, e crtx.Execution, fresh bool) (crtx.Execution, bool) {
	return s.m.paidReady(ctx, e, fresh)
}

func (s exact) close(ctx context.Context, c *crtx.Closing, o outcome) (bool, error) {
	return s.m.closePaid(ctx, c, o)
}

func (exact) cancellable(e crtx.Execution) error {
	// Its payment is on the chain, or on its way: it ends as it was paid,
	// and a failure is refunded there (closePaid).
	return &crtx.Error{Code: crtx.CodeNotCancellable, ExecutionID: e.ID,
		Message: "a call paid with x402 cannot be cancelled: if it fails, its payment goes back to the payer's token account"}
}
