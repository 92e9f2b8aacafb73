package crtx

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/crtx-market/crtx/merkle"
	"github.com/mr-tron/base58"
)

// maxBlockTxs bounds one block, so sealing a backlog stays a short transaction.
const maxBlockTxs = 1000

// Seal puts the environment's unsealed transactions (up to maxBlockTxs) into
// a new block signed by the ledger authority. It reports false when there was
// nothing to seal.
func (m *Market) Seal(ctx context.Context, env Environment) (Block, bool, error) {
	// What to seal is read from a snapshot, outside the write transaction:
	// on a single writer, time spent reading there is time executions wait.
	// The write then checks that nothing it read has changed.
	var txs []LedgerTx
	var prev Block
	err := m.store.View(ctx, func(tx Tx) (err error) {
		txs, err = tx.UnsealedTransactions(ctx, env, maxBlockTxs)
		if err != nil || len(txs) == 0 {
			return err
		}
		prev, err = tx.LastBlock(ctx, env)
		if errors.Is(err, ErrNotFound) {
			prev, err = Block{Hash: GenesisPrevHash}, nil
		}
		return err
	})
	if err != nil || len(txs) == 0 {
		return Block{}, false, internal("seal", err)
	}
	b := Block{Environment: env, Height: prev.Height + 1, PrevHash: prev.Hash,
		MerkleRoot: merkle.Root(TxLeaves(txs)).String(), TxCount: len(txs), SealedAt: m.now()}
	h := b.ComputeHash()
	b.Hash = h.String()
	b.Signature = base58.Encode(ed25519.Sign(m.cfg.Authority, h[:]))
	seqs := make([]int64, len(txs))
	for i, t := range txs {
		seqs[i] = t.Seq
	}
	sealed := false
	err = m.store.Update(ctx, func(tx Tx) error {
		// One sealer at a time per environment, across replicas.
		if ok, err := tx.TryLock(ctx, "crtx-sealer-"+string(env)); err != nil || !ok {
			return err
		}
		last, err := tx.LastBlock(ctx, env)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		}
		if last.Height != prev.Height {
			return nil // another sealer went first
		}
		// InsertBlock fails with ErrConflict unless every one is still unsealed.
		if err := tx.InsertBlock(ctx, b, seqs); err != nil {
			return err
		}
		sealed = true
		return nil
	})
	if errors.Is(err, ErrConflict) {
		return Block{}, false, nil
	}
	if err != nil || !sealed {
		return Block{}, false, internal("seal", err)
	}
	return b, true, nil
}

// RunSealer seals both environments every interval until ctx ends.
func (m *Market) RunSealer(ctx context.Context, interval time.Duration) {
	every(ctx, interval, false, func(ctx context.Context) {
		for _, env := range Environments {
			// Seal until caught up, so a burst never leaves a backlog behind.
			for {
				_, sealed, err := m.Seal(ctx, env)
				if err != nil {
					if ctx.Err() == nil {
						m.cfg.Logger.Error("seal block", "environment", env, "err", err)
					}
					break
				}
				if !sealed {
					break
				}
			}
		}
	})
}

// ProofStep is one sibling hash on the path from a transaction to its block's root.
type ProofStep struct {
	Hash string `json:"hash"`
	// Position is "left" or "right": where the sibling sits.
	Position string `json:"position"`
}

// Proof shows that a transaction is in a sealed, signed block.
type Proof struct {
	Environment        Environment `json:"environment"`
	TransactionID      string      `json:"transaction_id"`
	TransactionHash    string      `json:"transaction_hash"`
	Block              Block       `json:"block"`
	Path               []ProofStep `json:"path"`
	AuthorityPublicKey string      `json:"authority_public_key"`
}

// Proof returns the inclusion proof of a sealed transaction.
func (m *Market) Proof(ctx context.Context, env Environment, id string) (Proof, error) {
	var p Proof
	err := m.store.View(ctx, func(tx Tx) error {
		t, err := tx.Transaction(ctx, env, id)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeTransactionNotFound, "no transaction %q on %s", id, env)
		}
		if err != nil {
			return err
		}
		if t.BlockHeight == 0 {
			return Errorf(CodeNotSealed, "transaction %s is not sealed in a block yet; blocks are sealed every few seconds", id)
		}
		b, err := tx.Block(ctx, env, t.BlockHeight)
		if err != nil {
			return err
		}
		txs, err := tx.BlockTransactions(ctx, env, t.BlockHeight)
		if err != nil {
			return err
		}
		leaves := TxLeaves(txs)
		idx := -1
		for i := range txs {
			if txs[i].ID == id {
				idx = i
			}
		}
		p = Proof{Environment: env, TransactionID: id, TransactionHash: t.Hash().String(), Block: b,
			Path: []ProofStep{}, AuthorityPublicKey: Address(m.AuthorityPublicKey())}
		for _, s := range merkle.Prove(leaves, idx) {
			pos := "right"
			if s.Left {
				pos = "left"
			}
			p.Path = append(p.Path, ProofStep{Hash: s.Hash.String(), Position: pos})
		}
		return nil
	})
	return p, internal("proof", err)
}

// VerifyProof checks a proof for t against the authority key: the
// transaction hashes to the proof's leaf, the path leads to the block's
// Merkle root, the block hashes to its hash and the signature verifies.
func VerifyProof(p Proof, t LedgerTx, authority ed25519.PublicKey) error {
	leaf := t.Hash()
	if leaf.String() != p.TransactionHash {
		return errors.New("the transaction does not hash to the proven leaf")
	}
	root, err := merkle.ParseHash(p.Block.MerkleRoot)
	if err != nil {
		return fmt.Errorf("block merkle root: %w", err)
	}
	path := make([]merkle.Step, len(p.Path))
	for i, s := range p.Path {
		h, err := merkle.ParseHash(s.Hash)
		if err != nil || (s.Position != "left" && s.Position != "right") {
			return fmt.Errorf("proof step %d is malformed", i)
		}
		path[i] = merkle.Step{Hash: h, Left: s.Position == "left"}
	}
	if !merkle.Verify(root, leaf, path) {
		return errors.New("the path does not lead to the block's Merkle root")
	}
	h := p.Block.ComputeHash()
	if h.String() != p.Block.Hash {
		return errors.New("the block header does not hash to the block's hash")
	}
	if !VerifyBase58(authority, h[:], p.Block.Signature) {
		return errors.New("the block signature does not verify against the ledger authority key")
	}
	return nil
}
