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
}
