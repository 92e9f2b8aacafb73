package crtx

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// AgentStatus is where a listing stands.
type AgentStatus string

const (
	AgentActive   AgentStatus = "active"
	AgentPaused   AgentStatus = "paused"
	AgentDelisted AgentStatus = "delisted"
)

// StandardTags are the seed's capability taxonomy; creators may add custom tags.
var StandardTags = []string{"research", "code", "legal", "finance", "data", "social", "security", "writing", "sql", "monitoring"}

// Agent is a listing as stored.
type Agent struct {
	ID               string
	Creator          string // the creator's wallet
	Name             string
	Tagline          string
	Description      string
	Tags             []string
	InputSchema      json.RawMessage
	OutputSchema     json.RawMessage
	PricingModel     string
	Price            USDC
	EndpointURL      string
	SigningPublicKey string
	TimeoutSeconds   int
	Status           AgentStatus
	Collateral       USDC // locked so far, before any slashing
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// SuspendedAt is set while the operator suspends the agent: it is out of
	// the catalog and cannot be executed, whatever its status.
	SuspendedAt *time.Time
	DelistedAt  *time.Time
}

// AgentStats are one environment's statistics of an agent.
type AgentStats struct {
	Total      int64 // executions accepted
	Finished   int64 // completed or failed
	Successful int64 // completed
	TimeSumMS  int64 // over completed executions
	Disputes   int64
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

func collateralFor(tiers []CollateralTier, price USDC) USDC {
	for _, t := range tiers {
		if price <= t.MaxPrice {
			return t.Collateral
		}
	}
	return tiers[len(tiers)-1].Collateral
}

// ListingParams are a creator's listing details (CONTRACT §6). For an edit,
// nil fields stay as they are.
type ListingParams struct {
	Name             *string          `json:"name"`
	Tagline          *string          `json:"tagline"`
	Description      *string          `json:"description"`
	Tags             *[]string        `json:"tags"`
	InputSchema      *json.RawMessage `json:"input_schema"`
	OutputSchema     *json.RawMessage `json:"output_schema"`
	PricingModel     *string          `json:"pricing_model"`
	Price            *USDC            `json:"price_per_call_usdc"`
	EndpointURL      *string          `json:"endpoint_url"`
	SigningPublicKey *string          `json:"signing_public_key"`
	TimeoutSeconds   *int             `json:"timeout_seconds"`
	Status           *AgentStatus     `json:"status"`
}

var tagPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func invalidField(field, format string, args ...any) *Error {
	e := Errorf(CodeInvalidRequest, format, args...)
	e.Message = field + ": " + e.Message
	return e
}

func checkText(field, v string, max int) error {
	if strings.TrimSpace(v) == "" {
		return invalidField(field, "is required")
	}
	if n := utf8.RuneCountInString(v); n > max {
		return invalidField(field, "is %d characters; at most %d", n, max)
	}
	return nil
}

// apply checks p and writes its fields into a. Fields of a creation are all
// required but timeout_seconds; an edit may not change name, pricing model
// or status through this path.
func apply(p ListingParams, a *Agent, creating bool) error {
	required := map[string]bool{
		"name": p.Name == nil, "tagline": p.Tagline == nil, "description": p.Description == nil, "tags": p.Tags == nil,
		"input_schema": p.InputSchema == nil, "output_schema": p.OutputSchema == nil, "pricing_model": p.PricingModel == nil,
		"price_per_call_usdc": p.Price == nil, "endpoint_url": p.EndpointURL == nil, "signing_public_key": p.SigningPublicKey == nil,
	}
	if creating {
		for _, f := range []string{"name", "tagline", "description", "tags", "input_schema", "output_schema",
			"pricing_model", "price_per_call_usdc", "endpoint_url", "signing_public_key"} {
			if required[f] {
				return invalidField(f, "is required")
			}
		}
	}
	if p.Name != nil {
		if err := checkText("name", *p.Name, 64); err != nil {
			return err
		}
		a.Name = strings.TrimSpace(*p.Name)
	}
	if p.Tagline != nil {
		t := strings.TrimSpace(*p.Tagline)
		if err := checkText("tagline", t, 160); err != nil {
			return err
		}
		if strings.ContainsAny(t, "\n\r") {
			return invalidField("tagline", "must be one sentence on one line")
		}
		a.Tagline = t
	}
	if p.Description != nil {
		if err := checkText("description", *p.Description, 10_000); err != nil {
			return err
		}
		a.Description = *p.Description
	}
	if p.Tags != nil {
		tags := *p.Tags
		if len(tags) < 1 || len(tags) > 5 {
			return invalidField("tags", "give 1 to 5 tags")
		}
		for i, t := range tags {
			if !tagPattern.MatchString(t) || len(t) > 32 {
				return invalidField("tags", "%q is not a lowercase slug (a-z, 0-9 and single hyphens, up to 32 characters)", t)
			}
			if slices.Contains(tags[:i], t) {
				return invalidField("tags", "%q appears twice", t)
			}
		}
		a.Tags = slices.Clone(tags)
	}
	if p.InputSchema != nil {
		if err := checkSchema("input_schema", *p.InputSchema, true); err != nil {
			return err
		}
		a.InputSchema = compactJSON(*p.InputSchema)
	}
	if p.OutputSchema != nil {
		if err := checkSchema("output_schema", *p.OutputSchema, false); err != nil {
			return err
		}
		a.OutputSchema = compactJSON(*p.OutputSchema)
	}
	if p.PricingModel != nil {
		if !creating {
			return invalidField("pricing_model", "cannot change; pay_per_use is the only model in beta")
		}
		if *p.PricingModel != "pay_per_use" {
			return invalidField("pricing_model", "must be \"pay_per_use\" (the only model in beta)")
		}
		a.PricingModel = *p.PricingModel
	}
	if p.Price != nil {
		if *p.Price <= 0 || *p.Price > MaxPrice {
			return invalidField("price_per_call_usdc", "must be more than 0 and at most %s", MaxPrice)
		}
		a.Price = *p.Price
	}
	if p.SigningPublicKey != nil {
		if _, err := ParseAddress("signing_public_key", *p.SigningPublicKey); err != nil {
			return err
		}
		a.SigningPublicKey = *p.SigningPublicKey
	}
	if p.EndpointURL != nil {
		a.EndpointURL = *p.EndpointURL
	}
	if p.TimeoutSeconds != nil {
		if *p.TimeoutSeconds < 1 || *p.TimeoutSeconds > 300 {
			return invalidField("timeout_seconds", "must be 1 to 300")
		}
		a.TimeoutSeconds = *p.TimeoutSeconds
	} else if creating {
		a.TimeoutSeconds = 60
	}
	if p.Status != nil && creating {
		return invalidField("status", "a new listing is active; pause it afterwards")
	}
	return nil
}
