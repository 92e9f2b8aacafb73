package market

import (
	"context"
	"errors"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Receipt is the marketplace's signed statement of a final execution of
// p's wallet: what it cost, who was paid or refunded, the result hash and
// the creator's signature, and the ledger transactions that show it.
func (m *Executions) Receipt(ctx context.Context, p crtx.Principal, id string) (api.Receipt, error) {
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
		return api.Receipt{}, internal("receipt", err)
	}
	if !e.Status.Final() {
		return api.Receipt{}, &crtx.Error{Code: crtx.CodeNotFinal, ExecutionID: id,
			Message: "the execution is " + string(e.Status) + "; a receipt is issued once it is completed or failed"}
	}
	r := api.NewExecutionRecord(e, "", m.Links())
	// A dispute is only ever opened on a completed execution, and its
	// outcome is a statement of its own (Ruling): the receipt states the
	// execution as it ended, the same bytes before and after a dispute.
	status := e.Status
	if status == crtx.ExecDisputed {
		status = crtx.ExecCompleted
	}
	rc := api.Receipt{Version: api.ReceiptVersion, Issuer: m.cfg.PublicURL, ExecutionID: e.ID, Environment: e.Environment,
		Wallet: e.Wallet, AgentID: e.AgentID, Status: status, Cost: r.Cost, CreatorAmount: r.CreatorAmount,
		PlatformAmount: r.PlatformAmount, Refunded: r.Refunded, ResultHash: r.ResultHash, CreatorSignature: r.Signature,
		SigningPublicKey: r.SigningPublicKey, ListingTransaction: r.ListingTransaction, LedgerTransaction: r.LedgerTransaction,
		InitiatedAt: e.InitiatedAt, CompletedAt: e.CompletedAt}
	if pd := e.Paid; pd != nil && pd.Status == crtx.PaymentSettled {
		// Only what never changes: the refund's id, not its progress.
		rc.Payment = &api.ReceiptPayment{Scheme: crtx.SchemeExact, Network: pd.Network, Transaction: pd.Signature,
			Payer: pd.Payer, Amount: pd.Amount}
		if e.Refund != nil {
			rc.Payment.RefundWithdrawal = &e.Refund.ID
		}
	}
	rc.Signature, err = m.signStatement(rc.SignedBytes())
	return rc, internal("receipt", err)
}

// Ruling is the marketplace's signed statement of the outcome of the
// resolved dispute of an execution of p's wallet: dispute_not_found
// without one, not_final while it is open.
func (m *Executions) Ruling(ctx context.Context, p crtx.Principal, id string) (api.Ruling, error) {
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
		return api.Ruling{}, &crtx.Error{Code: crtx.CodeDisputeNotFound, ExecutionID: id, Message: "the execution has no dispute"}
	}
	if err != nil {
		return api.Ruling{}, internal("ruling", err)
	}
	if d.ResolvedAt == nil {
		return api.Ruling{}, &crtx.Error{Code: crtx.CodeNotFinal, ExecutionID: id,
			Message: "the dispute is open; a ruling is issued once the operator resolves it"}
	}
	rl := api.Ruling{Version: api.RulingVersion, Issuer: m.cfg.PublicURL, DisputeID: d.ID, ExecutionID: e.ID, Environment: e.Environment,
		Wallet: e.Wallet, AgentID: e.AgentID, Reason: d.Reason, EvidenceHash: d.EvidenceHash, Outcome: d.Status,
		Slashed: d.Slashed, Refunded: d.Refunded, OpenedAt: d.OpenedAt, ResolvedAt: *d.ResolvedAt}
	rl.Signature, err = m.signStatement(rl.SignedBytes())
	return rl, internal("ruling", err)
}

// signStatement signs the bytes of a statement with the marketplace key,
// as "ed25519:" and base58.
func (m *core) signStatement(b []byte, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return "ed25519:" + crtx.SignBase58(m.cfg.Signer, b), nil
}
