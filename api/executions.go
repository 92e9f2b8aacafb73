package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// ExecutionRecord is the full execution record (seed "Execution", CONTRACT
// §9). Fields not known yet are null, never missing.
type ExecutionRecord struct {
	ExecutionID     string           `json:"execution_id"`
	AgentID         string           `json:"agent_id"`
	AgentName       string           `json:"agent_name"`
	Environment     crtx.Environment `json:"environment"`
	Status          crtx.ExecStatus  `json:"status"`
	Result          *string          `json:"result"`
	ResultHash      *string          `json:"result_hash"`
	Cost            crtx.USDC        `json:"cost_usdc"`
	CreatorAmount   crtx.USDC        `json:"creator_amount_usdc"`
	PlatformAmount  crtx.USDC        `json:"platform_amount_usdc"`
	TokensUsed      *int64           `json:"tokens_used"`
	ExecutionTimeMS *int64           `json:"execution_time_ms"`
	InitiatedAt     time.Time        `json:"initiated_at"`
	CompletedAt     *time.Time       `json:"completed_at"`
	OnChainRecord   string           `json:"on_chain_record"`
	IPFSURL         *string          `json:"ipfs_url"`
	Error           *ExecError       `json:"error"`
	Dispute         *DisputeView     `json:"dispute"`
	// Refunded is what the escrow returned to the caller: the cost when the
	// execution failed (and then the split is zero), else 0. A dispute's
	// refund is the dispute's own.
	Refunded crtx.USDC `json:"refunded_usdc"`
	// Signature is the creator's over result_hash, as committed on the
	// ledger; SigningPublicKey the listing's key it was checked against,
	// registered by ListingTransaction (mainnet ledger).
	Signature          *string `json:"signature"`
	SigningPublicKey   string  `json:"signing_public_key"`
	ListingTransaction *string `json:"listing_transaction"`
	// LedgerTransaction is the ExecutionRecord or EscrowRefunded that
	// closed the escrow, in this environment's ledger.
	LedgerTransaction *string `json:"ledger_transaction"`
	// Payment is how an x402 execution was paid; absent for one paid
	// from a wallet's balance.
	Payment *PaymentView `json:"payment,omitempty"`
}

// ExecError says why an execution failed.
type ExecError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ExecutionSummary is an item of GET /v1/executions.
type ExecutionSummary struct {
	ExecutionID   string           `json:"execution_id"`
	AgentID       string           `json:"agent_id"`
	AgentName     string           `json:"agent_name"`
	Status        crtx.ExecStatus  `json:"status"`
	Cost          crtx.USDC        `json:"cost_usdc"`
	InitiatedAt   time.Time        `json:"initiated_at"`
	CompletedAt   *time.Time       `json:"completed_at"`
	OnChainRecord string           `json:"on_chain_record"`
	Environment   crtx.Environment `json:"environment"`
}

// ExecutionPage is the answer of GET /v1/executions.
type ExecutionPage struct {
	Executions []ExecutionSummary `json:"executions"`
	Page
}

// Accepted is the immediate answer to an asynchronous execute.
type Accepted struct {
	ExecutionID string          `json:"execution_id"`
	Status      crtx.ExecStatus `json:"status"`
	// Poll is set for an x402 call: how its payer follows it.
	Poll *Poll `json:"poll,omitempty"`
}
