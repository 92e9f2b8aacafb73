package market

import (
	"context"
	"errors"

	"github.com/crtx-market/crtx"
)

// Receipt is what the marketplace's receipt of a final execution of p's
// wallet states (api.NewReceipt): the execution and its payment;
// not_final while it runs.
func (m *Executions) Receipt(ctx context.Context, p crtx.Principal, id string) (crtx.Execution, error) {
	// The execution's row says all a receipt states: the result itself,
	// up to 4 MiB, is not read.
	e, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Execution, error) {
		e, err := ownExecution(ctx, tx, p, id)
		if err != nil {
			return e, err
		}
		return e, paymentOf(ctx, tx, &e)
	})
	if err != nil {
		return crtx.Execution{}, internal("receipt", err)
	}
	if !e.Status.Final() {
		return crtx.Execution{}, &crtx.Error{Code: crtx.CodeNotFinal, ExecutionID: id,
			Message: "the execution is " + string(e.Status) + "; a receipt is issued once it is completed or failed"}
	}
	return e, nil
}

// Ruling is what the marketplace's ruling on the resolved dispute of an
// execution of p's wallet states (api.NewRuling): the execution and its
// dispute; dispute_not_found without one, not_final while it is open.
func (m *Executions) Ruling(ctx context.Context, p crtx.Principal, id string) (crtx.Execution, crtx.Dispute, error) {
	var e crtx.Execution
	var d crtx.Dispute
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		if e, err = ownExecution(ctx, tx, p, id); err != nil {
			return err
		}
		d, err = tx.Disputes.DisputeByExecution(ctx, e.ID)
		return err
	})
	if errors.Is(err, crtx.ErrNotFound) {
		return crtx.Execution{}, crtx.Dispute{}, &crtx.Error{Code: crtx.CodeDisputeNotFound, ExecutionID: id, Message: "the execution has no dispute"}
	}
	if err != nil {
		return crtx.Execution{}, crtx.Dispute{}, internal("ruling", err)
	}
	if d.ResolvedAt == nil {
		return crtx.Execution{}, crtx.Dispute{}, &crtx.Error{Code: crtx.CodeNotFinal, ExecutionID: id,
			Message: "the dispute is open; a ruling is issued once the operator resolves it"}
	}
	return e, d, nil
}
