package crtx

// Balance is one wallet's money in one environment.
type Balance struct {
	Available USDC `json:"available_usdc"`
	Escrowed  USDC `json:"escrowed_usdc"`
	// Pending is earned but not yet available: the wallet's share of
	// executions that ended less than a roll-up interval ago (Rollup).
	Pending USDC `json:"pending_usdc"`
}

// Funding is the outcome of a deposit, withdrawal or airdrop.
type Funding struct {
	Transaction LedgerTx
	Balance     Balance
	// Faucet is what an airdrop paid on a local chain instead (the
	// ledger then moved nothing).
	Faucet *Faucet
}

// Faucet is test money a local chain's faucet gave a wallet: USDC in its
// token account (made if missing), and SOL for its transactions' fees.
type Faucet struct {
	Signature    string
	TokenAccount string
	Lamports     uint64
}
