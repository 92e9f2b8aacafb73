// Package payment is the seam between the one execution path and the ways
// of paying for a call. The path (market) builds every execution, holds
// its slot, dispatches it and judges the reply; where it touches money it
// asks the execution's Scheme: whether the call may be dispatched yet
// (Ready), how it closes (Close), whether it may be cancelled
// (Cancellable). Each scheme is a folder of its own (ledger, exact), and
// the daemon wires the list (market.Config.Schemes).
package payment

import (
	"context"
	"log/slog"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/x402"
)

// A Scheme is one way of paying for a call.
type Scheme interface {
	// Name names the scheme: "ledger" for a wallet's balance, or the
	// x402 scheme's own name, which the payment row keeps.
	Name() string
	// Ready settles what e's payment owes before e may be dispatched, and
	// reports whether it may; when it may not, e is returned as it ended
	// (or as it is, for a later turn). fresh is true for the request that
	// opened e.
	Ready(ctx context.Context, e crtx.Execution, fresh bool) (crtx.Execution, bool)
	// Close writes the last transaction of an execution, c, whose outcome
	// is o; false, writing nothing, when it was final already.
	Close(ctx context.Context, c *crtx.Closing, o Outcome) (bool, error)
	// Cancellable refuses the cancellation of e, or is nil when a pending
	// e may be cancelled.
	Cancellable(e crtx.Execution) error
}

// An X402 scheme is paid per call with x402: it also says what pays a
// call of an agent on a chain, and checks a payment against it. The
// market then simulates it, claims it with the execution (a payment row
// that names the scheme) and runs the call.
type X402 interface {
	Scheme
	// Requirements is the entry of PAYMENT-REQUIRED's accepts that pays
	// one call of a on c.
	Requirements(ctx context.Context, c crtx.Chain, a crtx.Agent) (x402.PaymentRequirements, error)
	// Terms refuses a payment whose accepted requirements are not the
	// ones a call of a on c has (the agent, price, asset, recipient, fee
	// payer); resource is the URL of the request it came with.
	Terms(payload x402.PaymentPayload, resource string, a crtx.Agent, c crtx.Chain) error
	// Check reads the payment's transaction and refuses one that does not
	// pay a call of a on c, without an RPC call.
	Check(payload x402.PaymentPayload, a crtx.Agent, c crtx.Chain) (crtx.CheckedPayment, error)
}

// Ledger is the name of the scheme of a wallet's balance (payment/ledger),
// which every market has.
const Ledger = "ledger"

// Outcome is what the dispatch of a call ended with, as a scheme closes it.
type Outcome struct {
	// Reply is the creator's reply, checked; nil when there is none.
	Reply   *crtx.CreatorReply
	Elapsed time.Duration
}

// New makes a scheme over what the market lends it.
type New func(Host) Scheme

// Host is what the execution path lends a scheme: the store and chains it
// moves money with, the market's one way of posting to the ledger and of
// queueing a withdrawal, and the path's own end.
type Host interface {
	Store() crtx.Store
	// Chain is env's chain, or an error that says it has none.
	Chain(env crtx.Environment) (crtx.Chain, error)
	Now() time.Time
	Logger() *slog.Logger
	// Post writes one ledger transaction inside tx (market/ledger.go).
	Post(ctx context.Context, tx crtx.Tx, env crtx.Environment, kind crtx.TxKind, data map[string]string, postings []crtx.Posting, accounts ...crtx.Account) (crtx.LedgerTx, error)
	// QueueWithdrawal queues w inside tx, debiting its wallet; the
	// withdrawal worker sends it once tx commits (Nudge).
	QueueWithdrawal(ctx context.Context, tx crtx.Tx, w crtx.Withdrawal, data map[string]string) error
	// NudgeWithdrawals wakes the withdrawal worker.
	NudgeWithdrawals()
	// Finish closes e with outcome o, an answer judged already, through
	// the path (stored, closed by its scheme): a recovery's end of a call
	// with a kept reply.
	Finish(ctx context.Context, e crtx.Execution, o Outcome) crtx.Execution
	// Announce tells the execution's followers that it changed.
	Announce(id string)
	// Figures are the process's counts for /metrics.
	Figures() *Figures
}
