package market

import (
	"context"
	"errors"

	"github.com/crtx-market/crtx"
)

// Account returns an account and its 50 newest transactions.
func (m *Ledger) Account(ctx context.Context, env crtx.Environment, address string) (crtx.AccountHistory, error) {
	var v crtx.AccountHistory
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		v.Account, err = tx.Ledger.Account(ctx, env, address)
		if err != nil {
			return missing(err, crtx.CodeAccountNotFound, "no account %q on %s", address, env)
		}
		v.Transactions, err = tx.Ledger.AccountTransactions(ctx, env, address, 50)
		return err
	})
	return v, internal("account", err)
}

// Transaction returns one ledger transaction.
func (m *Ledger) Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error) {
	t, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.LedgerTx, error) { return tx.Ledger.Transaction(ctx, env, id) })
	return t, internal("transaction", missing(err, crtx.CodeTransactionNotFound, "no transaction %q on %s", id, env))
}

// Block returns a sealed block and its transactions.
func (m *Ledger) Block(ctx context.Context, env crtx.Environment, height int64) (crtx.SealedBlock, error) {
	var v crtx.SealedBlock
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		v.Block, err = tx.Ledger.Block(ctx, env, height)
		if err != nil {
			return missing(err, crtx.CodeBlockNotFound, "no block %d on %s", height, env)
		}
		v.Transactions, err = tx.Ledger.BlockTransactions(ctx, env, height)
		return err
	})
	return v, internal("block", err)
}

// RecentBlocks returns the environment's n highest blocks, newest first,
// without their transactions: none before the first is sealed.
func (m *Ledger) RecentBlocks(ctx context.Context, env crtx.Environment, n int) ([]crtx.Block, error) {
	blocks, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.Block, error) {
		last, err := tx.Ledger.LastBlock(ctx, env)
		if errors.Is(err, crtx.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		blocks := []crtx.Block{last}
		for h := last.Height - 1; h > 0 && len(blocks) < n; h-- {
			b, err := tx.Ledger.Block(ctx, env, h)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
		return blocks, nil
	})
	return blocks, internal("recent blocks", err)
}
