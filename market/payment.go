package market

import (
	"context"
	"errors"

	"github.com/crtx-market/crtx"
)

// paymentOf attaches an x402 execution's payment and refund to e.
func paymentOf(ctx context.Context, tx crtx.Tx, e *crtx.Execution) error {
	if !e.PaidByX402() {
		return nil
	}
	p, err := tx.Funds.PaymentOf(ctx, e.ID)
	if err != nil {
		return err
	}
	e.Paid = &p
	if w, err := tx.Funds.Withdrawal(ctx, crtx.RefundID(e.ID)); err == nil {
		e.Refund = &w
	} else if !errors.Is(err, crtx.ErrNotFound) {
		return err
	}
	return nil
}
