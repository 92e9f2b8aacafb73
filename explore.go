package crtx

import (
	"context"
	"errors"
)

// AccountView is an account with its newest transactions.
type AccountView struct {
	Account      Account    `json:"account"`
	Transactions []LedgerTx `json:"transactions"`
}

// Account returns an account and its 50 newest transactions.
func (m *Market) Account(ctx context.Context, env Environment, address string) (AccountView, error) {
	var v AccountView
	err := m.store.View(ctx, func(tx Tx) (err error) {
		v.Account, err = tx.Account(ctx, env, address)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeAccountNotFound, "no account %q on %s", address, env)
		}
		if err != nil {
			return err
		}
		v.Transactions, err = tx.AccountTransactions(ctx, env, address, 50)
		return err
	})
	return v, internal("account", err)
}

// Transaction returns one ledger transaction.
func (m *Market) Transaction(ctx context.Context, env Environment, id string) (LedgerTx, error) {
	var t LedgerTx
	err := m.store.View(ctx, func(tx Tx) (err error) {
		t, err = tx.Transaction(ctx, env, id)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeTransactionNotFound, "no transaction %q on %s", id, env)
		}
		return err
	})
	return t, internal("transaction", err)
}

// BlockView is a block with its transactions.
type BlockView struct {
	Block        Block      `json:"block"`
	Transactions []LedgerTx `json:"transactions"`
}

// Block returns a sealed block and its transactions.
func (m *Market) Block(ctx context.Context, env Environment, height int64) (BlockView, error) {
	var v BlockView
	err := m.store.View(ctx, func(tx Tx) (err error) {
		v.Block, err = tx.Block(ctx, env, height)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeBlockNotFound, "no block %d on %s", height, env)
		}
		if err != nil {
			return err
		}
		v.Transactions, err = tx.BlockTransactions(ctx, env, height)
		return err
	})
	return v, internal("block", err)
}

// LatestBlock returns the environment's highest block; ErrNotFound before the first.
func (m *Market) LatestBlock(ctx context.Context, env Environment) (Block, error) {
	b, err := Read(ctx, m.store, func(tx Tx) (Block, error) { return tx.LastBlock(ctx, env) })
	if errors.Is(err, ErrNotFound) {
		return b, err
	}
	return b, internal("latest block", err)
}
