package market

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
)

// Every execution takes one path, whatever pays for it: built by
// newExecution, opened with what holds its price, run by run and closed
// by finish; at each step that touches money, the path asks the
// execution's scheme (package payment): a wallet's balance (payment/ledger)
// or an x402 scheme (payment/exact), which the daemon wires.

// schemes are the market's ways of paying, by name; x402 lists those paid
// with x402 in the order PAYMENT-REQUIRED offers them.
type schemes struct {
	by   map[string]payment.Scheme
	x402 []payment.X402
}

// newSchemes makes each scheme over h; the ledger's is required.
func newSchemes(h payment.Host, news []payment.New) (schemes, error) {
	s := schemes{by: map[string]payment.Scheme{}}
	for _, n := range news {
		sc := n(h)
		if _, dup := s.by[sc.Name()]; dup {
			return s, fmt.Errorf("crtx: payment scheme %q is wired twice", sc.Name())
		}
		s.by[sc.Name()] = sc
		if x, ok := sc.(payment.X402); ok {
			s.x402 = append(s.x402, x)
		}
	}
	if s.by[payment.Ledger] == nil {
		return s, fmt.Errorf("crtx: the %q payment scheme is required", payment.Ledger)
	}
	return s, nil
}

// x402Named is the x402 scheme named name, nil when there is none.
func (s schemes) x402Named(name string) payment.X402 {
	x, _ := s.by[name].(payment.X402)
	return x
}

// schemeOf is the scheme that pays for e: the ledger's, or the one its
// x402 payment names.
func (m *core) schemeOf(ctx context.Context, e crtx.Execution) (payment.Scheme, error) {
	if !e.PaidByX402() {
		return m.schemes.by[payment.Ledger], nil
	}
	return crtx.Read(ctx, m.store, func(tx crtx.Tx) (payment.Scheme, error) { return m.schemeIn(ctx, tx, e) })
}

// schemeIn is schemeOf, read in tx.
func (m *core) schemeIn(ctx context.Context, tx crtx.Tx, e crtx.Execution) (payment.Scheme, error) {
	if !e.PaidByX402() {
		return m.schemes.by[payment.Ledger], nil
	}
	p, err := tx.Funds.PaymentOf(ctx, e.ID)
	if err != nil {
		return nil, fmt.Errorf("payment of %s: %w", e.ID, err)
	}
	s := m.schemes.by[p.Scheme]
	if s == nil {
		return nil, fmt.Errorf("payment of %s: no scheme %q is wired", e.ID, p.Scheme)
	}
	return s, nil
}

// schemeHost is what the market lends its schemes (payment.Host).
type schemeHost struct{ m *core }

func (h schemeHost) Store() crtx.Store { return h.m.store }
func (h schemeHost) Chain(env crtx.Environment) (crtx.Chain, error) {
	return h.m.chain(env)
}
func (h schemeHost) Now() time.Time       { return h.m.now() }
func (h schemeHost) Logger() *slog.Logger { return h.m.cfg.Logger }
func (h schemeHost) Post(ctx context.Context, tx crtx.Tx, env crtx.Environment, kind crtx.TxKind, data map[string]string, postings []crtx.Posting, accounts ...crtx.Account) (crtx.LedgerTx, error) {
	return h.m.post(ctx, tx, env, kind, data, postings, accounts...)
}
func (h schemeHost) QueueWithdrawal(ctx context.Context, tx crtx.Tx, w crtx.Withdrawal, data map[string]string) error {
	return h.m.queueWithdrawal(ctx, tx, w, data)
}
func (h schemeHost) NudgeWithdrawals() { h.m.nudgeWithdrawals() }
func (h schemeHost) Finish(ctx context.Context, e crtx.Execution, o payment.Outcome) crtx.Execution {
	h.m.finish(ctx, &e, outcome{reply: o.Reply, elapsed: o.Elapsed})
	return e
}
func (h schemeHost) Announce(id string)        { h.m.announce(id) }
func (h schemeHost) Figures() *payment.Figures { return &h.m.paying }
