package market

// Market is the marketplace: one service per concern, over one store and
// clock. Each service's public methods own their store transaction. Market
// itself runs the process's lifecycle (workers, notifications, heartbeat).
type Market struct {
	*core
	Catalog    *Catalog
	Executions *Executions
	Funds      *Funds
	Listings   *Listings
	Disputes   *Disputes
	Accounts   *Accounts
	Connectors *Connectors
	Ledger     *Ledger
	X402       *X402
}

// Catalog is what callers browse: listed agents, their figures, examples
// and latency.
type Catalog struct{ *core }

// Executions opens, follows, cancels and reads executions, with their
// results, receipts and rulings.
type Executions struct{ *core }

// Funds is the money of wallets: balances, airdrops, deposits, withdrawals
// and earnings.
type Funds struct{ *core }

// Listings is creators' side: listing nonces, listings and their
// collateral, endpoint tests, and the operator's verification and
// suspension.
type Listings struct{ *core }

// Disputes opens, answers and resolves disputes.
type Disputes struct{ *core }

// Accounts signs wallets and the operator in and out and holds their API
// keys, sent forms and sign-in-with-x proofs.
type Accounts struct{ *core }

// Connectors is what reaches the marketplace or is reached from it on a
// caller's behalf: OAuth clients and tokens, A2A push configurations and
// webhooks.
type Connectors struct{ *core }

// Ledger seals, anchors, rolls up and explores the ledger's blocks, and
// checks the chain's reserves against it.
type Ledger struct{ *core }

// X402 prices, verifies and settles calls paid per call with x402.
type X402 struct{ *core }
