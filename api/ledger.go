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

// NewAccountView is h as the API serves it.
func NewAccountView(h crtx.AccountHistory) AccountView {
	return AccountView{Account: h.Account, Transactions: h.Transactions}
}

// NewBlockView is b as the API serves it, with its transactions' hashes.
func NewBlockView(b crtx.SealedBlock) BlockView {
	v := BlockView{Block: b.Block, Transactions: b.Transactions, TransactionHashes: make([]string, len(b.Transactions))}
	for i, l := range crtx.TxLeaves(b.Transactions) {
		v.TransactionHashes[i] = l.String()
	}
	return v
}
