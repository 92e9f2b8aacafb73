package crtx

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/crtx-market/crtx/merkle"
)

// ProofStep is one sibling hash on the path from a transaction to its block's root.
type ProofStep struct {
	Hash string `json:"hash"`
	// Position is "left" or "right": where the sibling sits.
	Position string `json:"position"`
}

// Proof shows that a transaction is in a sealed, signed block.
type Proof struct {
	Environment     Environment `json:"environment"`
	TransactionID   string      `json:"transaction_id"`
	TransactionHash string      `json:"transaction_hash"`
	Block           Block       `json:"block"`
	Path            []ProofStep `json:"path"`
}

// VerifyProof checks a proof for t against the authority key: the
// transaction hashes to the proof's leaf, the path leads to the block's
// Merkle root, the block hashes to its hash and the signature verifies.
func VerifyProof(p Proof, t LedgerTx, authority ed25519.PublicKey) error {
	leaf := t.Leaf()
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
