package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// RulingVersion is the layout of Ruling.
const RulingVersion = 1

// Ruling is what the marketplace attests about a resolved dispute
// (GET /v1/executions/{execution_id}/ruling), signed as a receipt is: the outcome of
// a dispute is a statement of its own, so that the execution's receipt
// stays as it was issued (docs/disputes.md).
type Ruling struct {
	Version      int              `json:"version"`
	Issuer       string           `json:"issuer"` // the marketplace's public URL
	DisputeID    string           `json:"dispute_id"`
	ExecutionID  string           `json:"execution_id"`
	Environment  crtx.Environment `json:"environment"`
	Wallet       string           `json:"wallet"` // the caller's, who disputed
	AgentID      string           `json:"agent_id"`
	Reason       string           `json:"reason"`
	EvidenceHash string           `json:"evidence_hash"`
	Outcome      string           `json:"outcome"` // upheld or rejected
	Slashed      crtx.USDC        `json:"slashed_usdc"`
	Refunded     crtx.USDC        `json:"refunded_usdc"`
	OpenedAt     time.Time        `json:"opened_at"`
	ResolvedAt   time.Time        `json:"resolved_at"`
	// Signature is "ed25519:" and base58 of the marketplace's signature
	// over SignedBytes.
	Signature string `json:"signature,omitempty"`
}

// SignedBytes is what Signature signs: the RFC 8785 form of the ruling
// without its signature.
func (r Ruling) SignedBytes() ([]byte, error) {
	r.Signature = ""
	return crtx.Canonical(r)
}

// ReadRuling reads a ruling as it was received, as ReadReceipt does a
// receipt.
func ReadRuling(data []byte) (r Ruling, signed []byte, signature string, err error) {
	return readSigned[Ruling](data, "ruling")
}
