package market

import (
	"context"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
)

// A call paid before it runs (asynchronous, or longer than SettleAfter)
// costs the fee payer two transactions when it fails, the payment and its
// refund, and its payer nothing: an agent that always fails, called from
// any number of wallets, would burn the treasury's SOL without bound. The
// cause is the agent, so the bound is the agent's: once at least
// failingPaidFirst of its x402 calls settled within failingWindow failed,
// and they are at least half of them, it is paid first no more until they
// age out of the window. Its synchronous calls within SettleAfter are paid
// after the result, costing nothing when they fail, and stay open; so do
// API keys. An agent that fails now and then among successes is not
// touched; one that means to pass must pay the marketplace's fee on a
// success for each failure.
const (
	failingWindow    = time.Hour
	failingPaidFirst = 3
)

// X402PaidFirst reports the x402 calls refused because their agent's calls
// paid first keep failing, and the refunds on the chain of calls paid
// first that failed (each cost the fee payer two fees), since the process
// started.
func (m *X402) X402PaidFirst() (refused, refunded int64) {
	return m.paying.Refused.Load(), m.paying.Refunded.Load()
}

// X402Stages reports the x402 stages' times so far, by stage.
func (m *X402) X402Stages() map[string]payment.StageTime { return m.paying.Stages() }

// mayPayFirst refuses a call of a that would be paid before it runs while
// a's recent calls paid that way mostly failed.
func (m *core) mayPayFirst(ctx context.Context, a crtx.Agent, settleAfter time.Duration) error {
	var ended, failed int
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		ended, failed, err = tx.Funds.PaidOutcomes(ctx, a.ID, m.now().Add(-failingWindow))
		return err
	})
	if err != nil {
		return internal("paid outcomes", err)
	}
	if failed < failingPaidFirst || failed*2 < ended {
		return nil
	}
	m.paying.Refused.Add(1)
	return &crtx.Error{Code: crtx.CodeUnavailable, RetryAfter: int(failingWindow / 10 / time.Second),
		Message: fmt.Sprintf("%d of the %d x402 calls of agent %s paid in the last hour failed, and a call paid before it runs is refunded on the chain at the marketplace's cost: "+
			"until its calls succeed again, pay it with x402 in a synchronous call of at most %d seconds, not streamed (paid only once its result checks out), or with an API key; "+
			"the payment was not sent: nothing was charged", failed, ended, a.ID, int(settleAfter/time.Second))}
}
