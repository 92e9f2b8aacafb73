package market

import (
	"context"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Receipt is the marketplace's signed statement of a final execution of
// p's wallet: what it cost, who was paid or refunded, the result hash and
// the creator's signature, and the ledger transactions that show it.
func (m *Market) Receipt(ctx context.Context, p crtx.Principal, id string) (api.Receipt, error) {
	// The execution's row says all a receipt states: the result itself,
	// up to 4 MiB, is not read.
	e, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Execution, error) { return ownExecution(ctx, tx, p, id) })
	if err != nil {
		return api.Receipt{}, internal("receipt", err)
	}
	if !e.Status.Final() {
		return api.Receipt{}, &crtx.Error{Code: crtx.CodeNotFinal, ExecutionID: id,
			Message: "the execution is " + string(e.Status) + "; a receipt is issued once it is completed or failed"}
	}
	r := m.Record(e, "")
	rc := api.Receipt{Version: api.ReceiptVersion, Issuer: m.cfg.PublicURL, ExecutionID: e.ID, Environment: e.Environment,
		Wallet: e.Wallet, AgentID: e.AgentID, Status: e.Status, Cost: r.Cost, CreatorAmount: r.CreatorAmount,
		PlatformAmount: r.PlatformAmount, Refunded: r.Refunded, ResultHash: r.ResultHash, CreatorSignature: r.Signature,
		SigningPublicKey: r.SigningPublicKey, ListingTransaction: r.ListingTransaction, LedgerTransaction: r.LedgerTransaction,
		InitiatedAt: e.InitiatedAt, CompletedAt: e.CompletedAt}
	b, err := rc.SignedBytes()
	if err != nil {
		return api.Receipt{}, internal("receipt", err)
	}
	rc.Signature = "ed25519:" + crtx.SignBase58(m.cfg.Signer, b)
	return rc, nil
}
