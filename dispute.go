package crtx

import (
	"encoding/json"
	"time"
)

// DisputeWindow is how long after completion an execution can be disputed,
// and DisputeResponseTime how long the creator has to answer (seed "Limits").
const (
	DisputeWindow       = 72 * time.Hour
	DisputeResponseTime = 72 * time.Hour
)

// Dispute is a caller's claim that an execution's result was wrong.
type Dispute struct {
	ID           string
	ExecutionID  string
	Environment  Environment
	Wallet       string
	AgentID      string
	Creator      string
	Reason       string
	Description  string
	Evidence     json.RawMessage
	EvidenceHash string
	Status       string // open, upheld, rejected
	OpenedAt     time.Time
	RespondBy    time.Time
	Response     string
	RespondedAt  *time.Time
	ResolvedAt   *time.Time
	Slashed      USDC
	Refunded     USDC
	// Cost is what the disputed execution cost. Read with the dispute,
	// not stored with it.
	Cost USDC
}

// DisputeParams open a dispute.
type DisputeParams struct {
	Reason      string          `json:"reason"`
	Description string          `json:"description"`
	Evidence    json.RawMessage `json:"evidence"`
}

// ResolveParams are the operator's ruling.
type ResolveParams struct {
	Outcome string `json:"outcome"`
	Slash   *USDC  `json:"slash_usdc"`
	Refund  *USDC  `json:"refund_usdc"`
}

// DisputeQuery selects disputes.
type DisputeQuery struct {
	Status  string
	Creator string
	// Wallet lists the disputes a wallet opened, the newest first.
	Wallet string
	// Resolved lists only resolved disputes, the latest resolved first
	// (others list oldest opened first).
	Resolved bool
	Limit    int
}
