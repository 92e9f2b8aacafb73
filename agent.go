package crtx

import (
	"encoding/json"
	"time"
)

// AgentStatus is where a listing stands.
type AgentStatus string

const (
	AgentActive   AgentStatus = "active"
	AgentPaused   AgentStatus = "paused"
	AgentDelisted AgentStatus = "delisted"
)

// Agent is a listing as stored.
type Agent struct {
	ID           string
	Creator      string // the creator's wallet
	Name         string
	Tagline      string
	Description  string
	Tags         []string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	PricingModel string
	// Price is a call's price, or a metered listing's base: a metered
	// listing (PricingMetered) adds Per1k for each 1,000 tokens used, and a
	// call costs at most Cap.
	Price            USDC
	Per1k, Cap       USDC
	EndpointURL      string
	SigningPublicKey string
	// KeyTx is the listing transaction (AgentListed, or a ListingUpdated
	// that changed the key) that registered SigningPublicKey.
	KeyTx          string
	TimeoutSeconds int
	Status         AgentStatus
	Collateral     USDC // locked so far, before any slashing
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// SuspendedAt is set while the operator suspends the agent: it is out of
	// the catalog and cannot be executed, whatever its status.
	SuspendedAt *time.Time
	DelistedAt  *time.Time
	// Example is the call its page, Try-it form and code samples show;
	// the listing's endpoint test runs it. Empty when none was given.
	Example Example
}

// Example is a listing's example call, which works as pasted: a task and
// parameters that match the agent's input schema.
type Example struct {
	Task       string
	Parameters json.RawMessage // an object; empty for none
}

// Metered is a's metered prices, and whether a is metered.
func (a Agent) Metered() (Metered, bool) {
	return Metered{Base: a.Price, Per1k: a.Per1k, Max: a.Cap}, a.PricingModel == PricingMetered
}

// Hold is what a call of a holds while it runs: its price, or a metered
// listing's most. Collateral and x402 payments are of it too.
func (a Agent) Hold() USDC {
	if _, ok := a.Metered(); ok {
		return a.Cap
	}
	return a.Price
}

// AgentStats are one environment's statistics of an agent.
type AgentStats struct {
	Total      int64 // executions ended, cancelled ones included
	Finished   int64 // completed or failed
	Successful int64 // completed
	TimeSumMS  int64 // over completed executions
	Disputes   int64
	// Rejected are ended executions whose input the agent refused
	// (CodeInvalidInput): counted in Total, not in Finished, as the
	// caller's fault rather than the agent's.
	Rejected int64
}

// SuccessRate is successful over finished executions; 0 when none finished.
func (s AgentStats) SuccessRate() float64 {
	if s.Finished == 0 {
		return 0
	}
	return float64(s.Successful) / float64(s.Finished)
}

// AvgTimeMS is the mean execution time of completed executions; 0 when none.
func (s AgentStats) AvgTimeMS() int64 {
	if s.Successful == 0 {
		return 0
	}
	return s.TimeSumMS / s.Successful
}

// Creator is a creator's public profile.
type Creator struct {
	Wallet      string
	DisplayName string
	Verified    bool
}

// ShownName is the creator's display name, or the default one made of
// its wallet without one.
func (c Creator) ShownName() string {
	if c.DisplayName == "" {
		return DefaultDisplayName(c.Wallet)
	}
	return c.DisplayName
}

// DefaultDisplayName is the first 4 and last 4 characters of the address
// joined by "…" (CONTRACT §6).
func DefaultDisplayName(wallet string) string {
	if len(wallet) <= 8 {
		return wallet
	}
	return wallet[:4] + "…" + wallet[len(wallet)-4:]
}

// CollateralTier is the collateral a price needs: the first tier whose
// MaxPrice is at least the price, or the last.
type CollateralTier struct {
	MaxPrice   USDC
	Collateral USDC
}

// DefaultCollateralTiers are CONTRACT §6's: ≤ 0.10 → 10; ≤ 1 → 50; ≤ 10 → 250; above → 1,000.
var DefaultCollateralTiers = []CollateralTier{
	{100_000, 10 * MicroPerUSDC},
	{MicroPerUSDC, 50 * MicroPerUSDC},
	{10 * MicroPerUSDC, 250 * MicroPerUSDC},
	{MaxPrice, 1000 * MicroPerUSDC},
}

// MaxPrice is the highest price of one call: 10,000 USDC.
const MaxPrice USDC = 10_000 * MicroPerUSDC

// MinPrice is the lowest price of one call: 0.0001 USDC, whose 1% fee (the
// default 100 bps) is 1 micro-USDC. Below it the fee rounds down to 0, and
// calls that cost their caller nothing (a creator calling its own agent
// pays itself) could be made without end.
const MinPrice USDC = 100

// CollateralFor is the collateral a listing at price locks, by the first tier
// whose ceiling the price does not pass.
func CollateralFor(tiers []CollateralTier, price USDC) USDC {
	for _, t := range tiers {
		if price <= t.MaxPrice {
			return t.Collateral
		}
	}
	return tiers[len(tiers)-1].Collateral
}

// ListingParams are a creator's listing details (CONTRACT §6). For an edit,
// nil fields stay as they are.
//
// CreatorSignature is the creator's wallet signature (base58, no prefix) of
// the listing statement (ListingStatement): required to list an agent and
// to change its signing key, so that the ledger shows the wallet authorised
// the key; ignored by an edit that keeps the key. KeySignature is the
// signing key's own signature of the same statement, required with it, so
// that only whoever holds a key can register it. ListingNonce is the
// marketplace's one-time nonce the statement names, so that a statement
// read from the ledger never registers a key again. Marketplace is the host
// of the public URL of the marketplace the statement is for (the answer of
// POST /v1/creator/listing-nonces names it), and Replaces, for a change of
// key, the transaction that registered the key it replaces (the listing's
// key_transaction): both are in the statement, and the marketplace refuses
// a statement made for another marketplace or another key.
type ListingParams struct {
	Name             *string          `json:"name"`
	Tagline          *string          `json:"tagline"`
	Description      *string          `json:"description"`
	Tags             *[]string        `json:"tags"`
	InputSchema      *json.RawMessage `json:"input_schema"`
	OutputSchema     *json.RawMessage `json:"output_schema"`
	PricingModel     *string          `json:"pricing_model"`
	Price            *USDC            `json:"price_per_call_usdc"`
	Per1k            *USDC            `json:"price_per_1k_tokens_usdc"`
	Cap              *USDC            `json:"max_price_per_call_usdc"`
	EndpointURL      *string          `json:"endpoint_url"`
	SigningPublicKey *string          `json:"signing_public_key"`
	TimeoutSeconds   *int             `json:"timeout_seconds"`
	Status           *AgentStatus     `json:"status"`
	CreatorSignature *string          `json:"creator_signature"`
	KeySignature     *string          `json:"key_signature"`
	ListingNonce     *string          `json:"listing_nonce"`
	Marketplace      *string          `json:"marketplace"`
	Replaces         *string          `json:"replaces"`
	// ExampleTask and ExampleParameters make the listing's Example; an
	// empty task removes it.
	ExampleTask       *string          `json:"example_task"`
	ExampleParameters *json.RawMessage `json:"example_parameters"`
}
