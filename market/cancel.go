package market

import (
	"context"

	"github.com/crtx-market/crtx"
)

// Cancel ends a pending execution that was not dispatched yet: failed,
// with its escrow refunded (CONTRACT §8). Anything else is not_cancellable.
func (m *Executions) Cancel(ctx context.Context, p crtx.Principal, id string) (crtx.Execution, error) {
	var out crtx.Execution
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		e, err := ownExecution(ctx, tx, p, id)
		if err != nil {
			return err
		}
		s, err := m.schemeIn(ctx, tx, e)
		if err != nil {
			return err
		}
		if err := s.Cancellable(e); err != nil {
			return err
		}
		if e.Status != crtx.ExecPending || e.DispatchedAt != nil {
			return &crtx.Error{Code: crtx.CodeNotCancellable, ExecutionID: id,
				Message: "only a pending execution that was not dispatched yet can be cancelled; this one is " + string(e.Status)}
		}
		now := m.now()
		e.Status, e.ErrorCode, e.ErrorMessage, e.CompletedAt = crtx.ExecFailed, crtx.CodeCancelled, "cancelled by the caller before dispatch", &now
		lt, accounts := m.closingTx(e)
		if err := tx.Ledger.InsertTransaction(ctx, &lt, accounts...); err != nil {
			return err
		}
		// As any refund of the escrow: off the key's spent (Closing.Write).
		if err := tx.Access.RefundKeyUsage(ctx, e.KeyID, e.Cost); err != nil {
			return err
		}
		e.RecordTx = lt.ID
		out = e
		if e.WebhookURL != "" {
			if err := tx.Deliveries.InsertWebhook(ctx, crtx.Webhook{ExecutionID: e.ID, URL: e.WebhookURL, NextAt: now, CreatedAt: now}); err != nil {
				return err
			}
		}
		return tx.Executions.UpdateExecution(ctx, e)
	})
	if err == nil {
		m.tally.end(out)
		m.announce(id)
	}
	return out, internal("cancel", err)
}
