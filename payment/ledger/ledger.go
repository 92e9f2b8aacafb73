// Package ledger is the way of paying with a wallet's balance, spent with
// an API key: the market holds the price in escrow as the call opens
// (Store.OpenExecution), and this scheme pays the creator and the
// platform, or returns the escrow, as it closes.
package ledger

import (
	"context"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
)

// Name is the scheme's name.
const Name = payment.Ledger

type scheme struct{ h payment.Host }

// New is the ledger scheme over h.
func New(h payment.Host) payment.Scheme { return scheme{h} }

func (scheme) Name() string { return Name }

// Ready lets every call go: its escrow was held as it opened.
func (scheme) Ready(_ context.Context, e crtx.Execution, _ bool) (crtx.Execution, bool) {
	return e, true
}

func (s scheme) Close(ctx context.Context, c *crtx.Closing, _ payment.Outcome) (bool, error) {
	return s.h.Store().CloseExecution(ctx, c)
}

// Cancellable lets a pending call go: its escrow returns as it closes.
func (scheme) Cancellable(crtx.Execution) error { return nil }
