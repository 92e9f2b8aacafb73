package api

import (
	"github.com/crtx-market/crtx"
)

// AccountView is an account with its newest transactions.
type AccountView struct {
	Account      crtx.Account    `json:"account"`
	Transactions []crtx.LedgerTx `json:"transactions"`
}

// BlockView is a block with its transactions, in order, and their hashes:
// the leaves of the block's Merkle tree.
type BlockView struct {
	Block             crtx.Block      `json:"block"`
	TransactionHashes []string        `json:"transaction_hashes"`
	Transactions      []crtx.LedgerTx `json:"transactions"`
}
