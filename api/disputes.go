package api

import (
	"encoding/json"
	"time"

	"github.com/crtx-market/crtx"
)

// DisputeView is the dispute of a disputed execution (CONTRACT §9).
type DisputeView struct {
	DisputeID  string     `json:"dispute_id"`
	Status     string     `json:"status"`
	Reason     string     `json:"reason"`
	OpenedAt   time.Time  `json:"opened_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
	Slashed    crtx.USDC  `json:"slashed_usdc"`
	Refunded   crtx.USDC  `json:"refunded_usdc"`
}

// DisputeInfo is a dispute as its parties and the operator read it.
type DisputeInfo struct {
	DisputeID    string           `json:"dispute_id"`
	ExecutionID  string           `json:"execution_id"`
	AgentID      string           `json:"agent_id"`
	Environment  crtx.Environment `json:"environment"`
	Status       string           `json:"status"`
	Reason       string           `json:"reason"`
	Description  string           `json:"description"`
	Evidence     json.RawMessage  `json:"evidence"`
	EvidenceHash string           `json:"evidence_hash"`
	OpenedAt     time.Time        `json:"opened_at"`
	RespondBy    time.Time        `json:"respond_by"`
	Response     *string          `json:"response"`
	RespondedAt  *time.Time       `json:"responded_at"`
	ResolvedAt   *time.Time       `json:"resolved_at"`
	Slashed      crtx.USDC        `json:"slashed_usdc"`
	Refunded     crtx.USDC        `json:"refunded_usdc"`
	// ExecutionCost is what the disputed call cost.
	ExecutionCost crtx.USDC `json:"execution_cost_usdc"`
}

// DisputeList is the answer of the dispute lists.
type DisputeList struct {
	Disputes []DisputeInfo `json:"disputes"`
}

// NewDisputeView is the dispute as execution records show it (CONTRACT §9).
func NewDisputeView(d crtx.Dispute) *DisputeView {
	return &DisputeView{DisputeID: d.ID, Status: d.Status, Reason: d.Reason, OpenedAt: d.OpenedAt,
		ResolvedAt: d.ResolvedAt, Slashed: d.Slashed, Refunded: d.Refunded}
}

// NewDisputeInfo is the dispute as its parties and the operator read it.
func NewDisputeInfo(d crtx.Dispute) DisputeInfo {
	i := DisputeInfo{DisputeID: d.ID, ExecutionID: d.ExecutionID, AgentID: d.AgentID, Environment: d.Environment, Status: d.Status,
		Reason: d.Reason, Description: d.Description, Evidence: d.Evidence, EvidenceHash: d.EvidenceHash, OpenedAt: d.OpenedAt,
		RespondBy: d.RespondBy, RespondedAt: d.RespondedAt, ResolvedAt: d.ResolvedAt, Slashed: d.Slashed, Refunded: d.Refunded,
		ExecutionCost: d.Cost}
	if d.Response != "" {
		i.Response = &d.Response
	}
	return i
}
