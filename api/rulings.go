package api

import (
	"crypto/ed25519"
	"fmt"
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

// NewRuling is the ruling on d, the resolved dispute of e, issued by l's
// marketplace and signed with its key.
func NewRuling(e crtx.Execution, d crtx.Dispute, l crtx.Links, key ed25519.PrivateKey) (Ruling, error) {
	if d.ResolvedAt == nil {
		return Ruling{}, fmt.Errorf("dispute %s is not resolved: no ruling", d.ID)
	}
	rl := Ruling{Version: RulingVersion, Issuer: l.PublicURL, DisputeID: d.ID, ExecutionID: e.ID, Environment: e.Environment,
		Wallet: e.Wallet, AgentID: e.AgentID, Reason: d.Reason, EvidenceHash: d.EvidenceHash, Outcome: d.Status,
		Slashed: d.Slashed, Refunded: d.Refunded, OpenedAt: d.OpenedAt, ResolvedAt: *d.ResolvedAt}
	var err error
	rl.Signature, err = sign(key, rl.SignedBytes)
	return rl, err
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
