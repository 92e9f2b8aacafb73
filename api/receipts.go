package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// ReceiptVersion is the layout of Receipt.
const ReceiptVersion = 1

// Receipt is what the marketplace attests about a final execution
// (GET /v1/executions/{id}/receipt), signed with its signing key (the
// signing_public_key of /.well-known/crtx.json), so that a caller can keep
// it and check it offline (docs/verify.md).
type Receipt struct {
	Version            int              `json:"version"`
	Issuer             string           `json:"issuer"` // the marketplace's public URL
	ExecutionID        string           `json:"execution_id"`
	Environment        crtx.Environment `json:"environment"`
	Wallet             string           `json:"wallet"` // the caller's
	AgentID            string           `json:"agent_id"`
	Status             crtx.ExecStatus  `json:"status"`
	Cost               crtx.USDC        `json:"cost_usdc"`
	CreatorAmount      crtx.USDC        `json:"creator_amount_usdc"`
	PlatformAmount     crtx.USDC        `json:"platform_amount_usdc"`
	Refunded           crtx.USDC        `json:"refunded_usdc"`
	ResultHash         *string          `json:"result_hash"`
	CreatorSignature   *string          `json:"creator_signature"`
	SigningPublicKey   string           `json:"signing_public_key"`
	ListingTransaction *string          `json:"listing_transaction"`
	LedgerTransaction  *string          `json:"ledger_transaction"`
	InitiatedAt        time.Time        `json:"initiated_at"`
	CompletedAt        *time.Time       `json:"completed_at"`
	// Signature is "ed25519:" and base58 of the marketplace's signature
	// over SignedBytes.
	Signature string `json:"signature,omitempty"`
}

// SignedBytes is what Signature signs: the RFC 8785 form of the receipt
// without its signature.
func (r Receipt) SignedBytes() ([]byte, error) {
	r.Signature = ""
	return crtx.Canonical(r)
}
