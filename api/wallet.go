package api

import (
	"github.com/crtx-market/crtx"
)

// WalletResponse is the answer of GET /v1/wallet.
type WalletResponse struct {
	Wallet   string                            `json:"wallet"`
	Balances map[crtx.Environment]crtx.Balance `json:"balances"`
}

// FundingResponse is the answer of an airdrop, deposit or withdrawal.
type FundingResponse struct {
	TransactionID string           `json:"transaction_id"`
	Kind          crtx.TxKind      `json:"kind"`
	Environment   crtx.Environment `json:"environment"`
	Wallet        string           `json:"wallet"`
	Amount        crtx.USDC        `json:"amount_usdc"`
	Balance       crtx.Balance     `json:"balance"`
	ExplorerURL   string           `json:"explorer_url"`
	// TokenAccount and SOLLamports are a faucet's (Kind KindFaucet): the
	// wallet's token account that received the USDC, and the SOL it got
	// for its fees. TransactionID is then the chain transaction's
	// signature, and Balance the wallet's ledger balance, unchanged.
	TokenAccount string `json:"token_account,omitempty"`
	SOLLamports  uint64 `json:"sol_lamports,omitempty"`
}

// KindFaucet is the kind of an airdrop paid on a local chain: it is a
// transaction of the chain, not of the ledger.
const KindFaucet crtx.TxKind = "Faucet"
