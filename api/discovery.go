package api

import (
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/x402"
)

// DiscoveryPage is the answer of GET /discovery/resources: x402 v2's
// discovery list (x402-specification-v2.md §8), each agent an x402
// resource as a Bazaar lists it.
type DiscoveryPage struct {
	X402Version int                 `json:"x402Version"`
	Items       []DiscoveryResource `json:"items"`
	Pagination  Page                `json:"pagination"`
}

// DiscoveryResource is one agent as an x402 resource: the fields of the
// specification (§8.2) and those Bazaar clients read beside them
// (@x402/extensions' DiscoveryResource: description, mimeType, tags and the
// bazaar extension under extensions).
type DiscoveryResource struct {
	// Resource is the agent's execute URL, which answers 402 with the
	// same accepts.
	Resource    string                     `json:"resource"`
	Type        string                     `json:"type"`
	X402Version int                        `json:"x402Version"`
	Accepts     []x402.PaymentRequirements `json:"accepts"`
	// LastUpdated is when the listing last changed, in RFC 3339: the
	// specification's prose says a Unix time, but its own SDKs (Go,
	// Python, TypeScript) and the facilitators they read send and parse an
	// ISO 8601 string, and a number breaks them.
	LastUpdated time.Time           `json:"lastUpdated"`
	Description string              `json:"description"`
	MimeType    string              `json:"mimeType"`
	Tags        []string            `json:"tags"`
	Extensions  DiscoveryExtensions `json:"extensions"`
	Metadata    DiscoveryMetadata   `json:"metadata"`
}

// DiscoveryExtensions are a resource's x402 extensions, as its 402 would
// declare them.
type DiscoveryExtensions struct {
	Bazaar x402.Bazaar `json:"bazaar"`
}

// DiscoveryMetadata is the specification's free-form metadata: the
// listing in crtx's words, and under Crtx what a Bazaar listing lacks.
type DiscoveryMetadata struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Price       crtx.USDC         `json:"price_per_call_usdc"`
	Crtx        DiscoveryEvidence `json:"crtx"`
}

// DiscoveryEvidence is the agent's record on this marketplace, from the
// catalog's statistics: a client that knows crtx weighs agents by it, and
// any other ignores the key.
type DiscoveryEvidence struct {
	AgentID    string `json:"agent_id"`
	ListingURL string `json:"listing_url"`
	// Environment is whose statistics these are.
	Environment        crtx.Environment `json:"environment"`
	TotalExecutions    int64            `json:"total_executions"`
	SuccessRate        float64          `json:"success_rate"`
	AvgExecutionTimeMS int64            `json:"avg_execution_time_ms"`
}

// NewDiscoveryResource is the agent of it as an x402 resource on the
// marketplace at publicURL, paid as accepts says, with env's statistics.
func NewDiscoveryResource(it crtx.AgentListItem, env crtx.Environment, accepts []x402.PaymentRequirements, bz x402.Bazaar, publicURL string) DiscoveryResource {
	a, s := it.Agent, it.Stats
	listing := publicURL + "/v1/agents/" + a.ID
	// A listing's tags are 1 to 5 lowercase slugs of at most 32
	// characters: Bazaar's rules for tags (at most 5, printable ASCII, 32
	// characters each) keep every one.
	return DiscoveryResource{Resource: listing + "/execute", Type: x402.ResourceType, X402Version: x402.Version,
		Accepts: accepts, LastUpdated: a.UpdatedAt.UTC(), Description: a.Name + ": " + a.Tagline, MimeType: "application/json",
		Tags: a.Tags, Extensions: DiscoveryExtensions{Bazaar: bz},
		Metadata: DiscoveryMetadata{Name: a.Name, Description: a.Description, Price: a.Price,
			Crtx: DiscoveryEvidence{AgentID: a.ID, ListingURL: listing, Environment: env, TotalExecutions: s.Total,
				SuccessRate: s.SuccessRate(), AvgExecutionTimeMS: s.AvgTimeMS()}},
	}
}
