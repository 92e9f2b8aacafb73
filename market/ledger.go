package market

import (
	"context"

	"github.com/crtx-market/crtx"
)

// post records one ledger transaction inside tx, creating the accounts it
// names if they are new. It is the only way money moves, but for the
// transactions that open and close an execution, which the store writes
// with the execution (Store.OpenExecution, Store.CloseExecution).
func (m *core) post(ctx context.Context, tx crtx.Tx, env crtx.Environment, kind crtx.TxKind, data map[string]string, postings []crtx.Posting, accounts ...crtx.Account) (crtx.LedgerTx, error) {
	lt, accounts := m.ledgerTx(env, kind, data, postings, accounts...)
	if err := tx.Ledger.InsertTransaction(ctx, &lt, accounts...); err != nil {
		return crtx.LedgerTx{}, err
	}
	return lt, nil
}

// ledgerTx builds a transaction stamped now and the accounts it concerns,
// created now if they are new. Accounts that no posting names are recorded
// as the transaction's referenced accounts.
func (m *core) ledgerTx(env crtx.Environment, kind crtx.TxKind, data map[string]string, postings []crtx.Posting, accounts ...crtx.Account) (crtx.LedgerTx, []crtx.Account) {
	now := m.now()
	for i := range accounts {
		accounts[i].CreatedAt = now
	}
	if data == nil {
		data = map[string]string{}
	}
	named := map[string]bool{}
	for _, p := range postings {
		named[p.From], named[p.To] = true, true
	}
	refs := []string{}
	for _, a := range accounts {
		if !named[a.Address] {
			refs = append(refs, a.Address)
		}
	}
	if postings == nil {
		postings = []crtx.Posting{}
	}
	return crtx.LedgerTx{ID: crtx.NewTxID(), Environment: env, Kind: kind, Data: data, Postings: postings, Accounts: refs, CreatedAt: now, Version: crtx.HashVersion}, accounts
}
