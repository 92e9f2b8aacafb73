package market

import (
	"context"
	"crypto/ed25519"
	"errors"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/merkle"
	"github.com/mr-tron/base58"
)

// maxBlockTxs bounds one block, so sealing a backlog stays a short transaction.
const maxBlockTxs = 1000

// Seal puts the environment's unsealed transactions (up to maxBlockTxs) into
// a new block signed by the ledger authority. It reports false when there was
// nothing to seal.
func (m *Ledger) Seal(ctx context.Context, env crtx.Environment) (crtx.Block, bool, error) {
	// What to seal is read from a snapshot, outside the write transaction:
	// on a single writer, time spent reading there is time executions wait.
	// The write then checks that nothing it read has changed.
	var txs []crtx.LedgerTx
	var prev crtx.Block
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		txs, err = tx.Ledger.UnsealedTransactions(ctx, env, maxBlockTxs)
		if err != nil || len(txs) == 0 {
			return err
		}
		prev, err = tx.Ledger.LastBlock(ctx, env)
		if errors.Is(err, crtx.ErrNotFound) {
			prev, err = crtx.Block{Hash: crtx.GenesisPrevHash}, nil
		}
		return err
	})
	if err != nil || len(txs) == 0 {
		return crtx.Block{}, false, internal("seal", err)
	}
	b := crtx.Block{Environment: env, Height: prev.Height + 1, PrevHash: prev.Hash,
		MerkleRoot: merkle.Root(crtx.TxLeaves(txs)).String(), TxCount: len(txs),
		SealedAt: m.now().UTC().Truncate(time.Microsecond), Version: crtx.HashVersion}
	h := b.ComputeHash()
	b.Hash = h.String()
	b.Signature = base58.Encode(ed25519.Sign(m.cfg.Authority, h[:]))
	seqs := make([]int64, len(txs))
	for i, t := range txs {
		seqs[i] = t.Seq
	}
	sealed := false
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		// One sealer at a time per environment, across replicas.
		if ok, err := tx.System.TryLock(ctx, "crtx-sealer-"+string(env)); err != nil || !ok {
			return err
		}
		last, err := tx.Ledger.LastBlock(ctx, env)
		switch {
		case errors.Is(err, crtx.ErrNotFound):
		case err != nil:
			return err
		}
		if last.Height != prev.Height {
			return nil // another sealer went first
		}
		// InsertBlock fails with ErrConflict unless every one is still unsealed.
		if err := tx.Ledger.InsertBlock(ctx, b, seqs); err != nil {
			return err
		}
		sealed = true
		return nil
	})
	if errors.Is(err, crtx.ErrConflict) {
		return crtx.Block{}, false, nil
	}
	if err != nil || !sealed {
		return crtx.Block{}, false, internal("seal", err)
	}
	return b, true, nil
}

// RunSealer seals both environments every interval until ctx ends.
func (m *Ledger) RunSealer(ctx context.Context, interval time.Duration) {
	every(ctx, interval, false, func(ctx context.Context) {
		for _, env := range crtx.Environments {
			// Seal until caught up, so a burst never leaves a backlog behind.
			for {
				_, sealed, err := m.Seal(ctx, env)
				if m.failed(ctx, err, "seal block", "environment", env) || !sealed {
					break
				}
			}
		}
	})
}

// Proof returns the inclusion proof of a sealed transaction.
func (m *Ledger) Proof(ctx context.Context, env crtx.Environment, id string) (crtx.Proof, error) {
	var p crtx.Proof
	err := m.store.View(ctx, func(tx crtx.Tx) error {
		t, err := tx.Ledger.Transaction(ctx, env, id)
		if err != nil {
			return missing(err, crtx.CodeTransactionNotFound, "no transaction %q on %s", id, env)
		}
		if t.BlockHeight == 0 {
			return crtx.Errorf(crtx.CodeNotSealed, "transaction %s is not sealed in a block yet; blocks are sealed every few seconds", id)
		}
		b, err := tx.Ledger.Block(ctx, env, t.BlockHeight)
		if err != nil {
			return err
		}
		txs, err := tx.Ledger.BlockTransactions(ctx, env, t.BlockHeight)
		if err != nil {
			return err
		}
		leaves := crtx.TxLeaves(txs)
		idx := -1
		for i := range txs {
			if txs[i].ID == id {
				idx = i
			}
		}
		p = crtx.Proof{Environment: env, TransactionID: id, TransactionHash: t.Leaf().String(), Block: b,
			Path: []crtx.ProofStep{}}
		for _, s := range merkle.Prove(leaves, idx) {
			pos := "right"
			if s.Left {
				pos = "left"
			}
			p.Path = append(p.Path, crtx.ProofStep{Hash: s.Hash.String(), Position: pos})
		}
		return nil
	})
	return p, internal("proof", err)
}
