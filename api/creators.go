package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// CreatorAgent is a listing as its creator sees it: the full listing and
// what only the creator may read.
type CreatorAgent struct {
	AgentListing
	EndpointURL      string    `json:"endpoint_url"`
	SigningPublicKey string    `json:"signing_public_key"`
	Collateral       crtx.USDC `json:"collateral_usdc"`
	UpdatedAt        time.Time `json:"updated_at"`
	// Suspended is true while the operator keeps the agent out of the catalog.
	Suspended bool `json:"suspended"`
}

// CreatorAgentList is the answer of GET /v1/creator/agents.
type CreatorAgentList struct {
	Agents []CreatorAgent `json:"agents"`
}

// CreatorProfile is the answer of PUT /v1/creator/profile.
type CreatorProfile struct {
	Wallet      string `json:"wallet"`
	DisplayName string `json:"display_name"`
	Verified    bool   `json:"verified"`
}

// ListingNonce is the answer of POST /v1/creator/listing-nonces: a one-time
// nonce for the listing statement of one listing or key change.
type ListingNonce struct {
	Nonce     string    `json:"nonce"`
	ExpiresAt time.Time `json:"expires_at"`
}

// TestReport is the answer of POST /v1/creator/test-execution and what the
// reachability test of a listing found.
type TestReport struct {
	Reachable   bool     `json:"reachable"`
	LatencyMS   int64    `json:"latency_ms"`
	ShapeOK     bool     `json:"shape_ok"`
	SignatureOK bool     `json:"signature_ok"`
	Status      string   `json:"status"`
	Problems    []string `json:"problems"`
}
