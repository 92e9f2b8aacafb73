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
	// KeyTransaction is the ledger transaction that registered the agent's
	// signing key: what a statement changing the key names as replaces.
	KeyTransaction string `json:"key_transaction"`
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
	// Marketplace is the host of the marketplace's public URL, which the
	// statement names.
	Marketplace string `json:"marketplace"`
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
	// Exchange is the test request as sent and the answer as received;
	// absent when no request was sent (a URL refused before).
	Exchange *Exchange `json:"exchange,omitempty"`
	// Example is the example task the test sent; absent when none.
	Example string `json:"example_task,omitempty"`
}

// Passes is the listing rule, as crtx.TestReport's.
func (r TestReport) Passes() bool {
	return crtx.TestReport{Reachable: r.Reachable, ShapeOK: r.ShapeOK, SignatureOK: r.SignatureOK, Status: r.Status, Example: r.Example}.Passes()
}

// Exchange is an HTTP exchange as text.
type Exchange struct {
	// Request is the request line, headers and body as sent.
	Request string `json:"request"`
	// Response is the status line, headers and the body's first 4 KiB as
	// received; absent when nothing answered.
	Response string `json:"response,omitempty"`
}

// NewCreatorAgent is a listing as its creator sees it; its statistics,
// whichever environment's, are shown as mainnet's.
func NewCreatorAgent(it crtx.AgentListItem, l crtx.Links) CreatorAgent {
	a := it.Agent
	return CreatorAgent{AgentListing: NewAgentListing(it, crtx.Mainnet, l), EndpointURL: a.EndpointURL,
		SigningPublicKey: a.SigningPublicKey, Collateral: a.Collateral, UpdatedAt: a.UpdatedAt,
		Suspended: a.SuspendedAt != nil, KeyTransaction: a.KeyTx}
}

// NewCreatorAgentList is a creator's listings.
func NewCreatorAgentList(its []crtx.AgentListItem, l crtx.Links) CreatorAgentList {
	v := CreatorAgentList{Agents: make([]CreatorAgent, len(its))}
	for i, it := range its {
		v.Agents[i] = NewCreatorAgent(it, l)
	}
	return v
}

// NewCreatorProfile is c's profile.
func NewCreatorProfile(c crtx.Creator) CreatorProfile {
	return CreatorProfile{Wallet: c.Wallet, DisplayName: c.ShownName(), Verified: c.Verified}
}

// NewListingNonce is n as the API serves it.
func NewListingNonce(n crtx.ListingNonce) ListingNonce {
	return ListingNonce{Nonce: n.Nonce, ExpiresAt: n.ExpiresAt, Marketplace: n.Marketplace}
}

// NewTestReport is r as the API serves it.
func NewTestReport(r crtx.TestReport) TestReport {
	v := TestReport{Reachable: r.Reachable, LatencyMS: r.LatencyMS, ShapeOK: r.ShapeOK, SignatureOK: r.SignatureOK,
		Status: r.Status, Problems: r.Problems, Example: r.Example}
	if r.Exchange != nil {
		v.Exchange = &Exchange{Request: r.Exchange.Request, Response: r.Exchange.Response}
	}
	return v
}
