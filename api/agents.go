package api

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// CreatorSummary is the creator of an agent in lists.
type CreatorSummary struct {
	Pubkey   string `json:"pubkey"`
	Verified bool   `json:"verified"`
}

// CreatorInfo is the creator of an agent in its full listing.
type CreatorInfo struct {
	Pubkey      string `json:"pubkey"`
	DisplayName string `json:"display_name"`
	Verified    bool   `json:"verified"`
}

// AgentFacts are what every view of an agent begins with: who it is, its
// price and its statistics. Embedded, its fields stand in the JSON where
// the embedding puts them.
type AgentFacts struct {
	AgentID string    `json:"agent_id"`
	Name    string    `json:"name"`
	Tagline string    `json:"tagline"`
	Tags    []string  `json:"tags"`
	Price   crtx.USDC `json:"price_per_call_usdc"`
	// A metered listing's price per 1,000 tokens and most per call, its
	// price_per_call_usdc being its base (CONTRACT §8); absent for a
	// price per call.
	Per1k              *crtx.USDC `json:"price_per_1k_tokens_usdc,omitempty"`
	Cap                *crtx.USDC `json:"max_price_per_call_usdc,omitempty"`
	TotalExecutions    int64      `json:"total_executions"`
	SuccessRate        float64    `json:"success_rate"`
	AvgExecutionTimeMS int64      `json:"avg_execution_time_ms"`
}

// Metered is a metered listing's prices, and whether the listing is
// metered (as crtx.Agent.Metered).
func (f AgentFacts) Metered() (crtx.Metered, bool) {
	if f.Per1k == nil || f.Cap == nil {
		return crtx.Metered{}, false
	}
	return crtx.Metered{Base: f.Price, Per1k: *f.Per1k, Max: *f.Cap}, true
}

// Hold is what a call holds while it runs (as crtx.Agent.Hold).
func (f AgentFacts) Hold() crtx.USDC {
	if m, ok := f.Metered(); ok {
		return m.Max
	}
	return f.Price
}

// AgentSummary is an item of GET /v1/agents (seed "Agent summary").
type AgentSummary struct {
	AgentFacts
	Creator CreatorSummary   `json:"creator"`
	Status  crtx.AgentStatus `json:"status"`
}

// AgentPage is the answer of GET /v1/agents.
type AgentPage struct {
	Agents []AgentSummary `json:"agents"`
	Page

	// encoded is shared by the copies of a cached page, so that a page
	// served many times is encoded once.
	encoded *encodedJSON
}

// NewAgentPage is p as GET /v1/agents answers it. A page the marketplace
// keeps is mapped once, and every copy of the answer shares one encoding.
func NewAgentPage(p crtx.AgentPage) AgentPage {
	return p.Memo.Do(func() any {
		page := AgentPage{Agents: make([]AgentSummary, len(p.Items)), Page: Page{Total: p.Total, Limit: p.Limit, Offset: p.Offset}}.Kept()
		for i, it := range p.Items {
			a := it.Agent
			page.Agents[i] = AgentSummary{AgentFacts: newAgentFacts(a, it.Stats),
				Creator: CreatorSummary{Pubkey: a.Creator, Verified: it.Creator.Verified}, Status: a.Status}
		}
		return page
	}).(AgentPage)
}

type encodedJSON struct {
	once sync.Once
	b    []byte
	err  error

	compressOnce sync.Once
	compressed   []byte
}

// Kept returns the page marked for keeping: it and every copy of it share
// one encoding.
func (p AgentPage) Kept() AgentPage {
	p.encoded = &encodedJSON{}
	return p
}

// JSON returns the page encoded as JSON with a trailing newline,
// encoding it at most once per cached page. The bytes are shared: callers
// must not change them.
func (p AgentPage) JSON() ([]byte, error) {
	enc := func() ([]byte, error) {
		b, err := json.Marshal(p)
		return append(b, '\n'), err
	}
	if p.encoded == nil {
		return enc()
	}
	p.encoded.once.Do(func() { p.encoded.b, p.encoded.err = enc() })
	return p.encoded.b, p.encoded.err
}

// CompressedJSON returns compress applied to the page's JSON, at most once
// per cached page, so that a page served many times is compressed once.
// Every caller must pass the same compression; the bytes are shared.
func (p AgentPage) CompressedJSON(compress func([]byte) []byte) ([]byte, error) {
	b, err := p.JSON()
	if err != nil {
		return nil, err
	}
	if p.encoded == nil {
		return compress(b), nil
	}
	p.encoded.compressOnce.Do(func() { p.encoded.compressed = compress(b) })
	return p.encoded.compressed, nil
}

// AgentListing is the full listing of GET /v1/agents/{agent_id} (seed "Agent").
// Statistics are those of Environment.
type AgentListing struct {
	AgentFacts
	Creator              CreatorInfo      `json:"creator"`
	Status               crtx.AgentStatus `json:"status"`
	Description          string           `json:"description"`
	InputSchema          json.RawMessage  `json:"input_schema"`
	OutputSchema         json.RawMessage  `json:"output_schema"`
	SuccessfulExecutions int64            `json:"successful_executions"`
	DisputeCount         int64            `json:"dispute_count"`
	// InvalidInputCount is how many calls the agent refused as invalid
	// input: in total_executions, not in success_rate.
	InvalidInputCount int64 `json:"invalid_input_count"`
	// ExampleTask and ExampleParameters are the creator's example call,
	// which the listing's endpoint test ran; absent when none was given.
	ExampleTask       string           `json:"example_task,omitempty"`
	ExampleParameters json.RawMessage  `json:"example_parameters,omitempty"`
	OnChainListing    string           `json:"on_chain_listing"`
	CreatedAt         time.Time        `json:"created_at"`
	PricingModel      string           `json:"pricing_model"`
	TimeoutSeconds    int              `json:"timeout_seconds"`
	Environment       crtx.Environment `json:"environment"`
}

func newAgentFacts(a crtx.Agent, s crtx.AgentStats) AgentFacts {
	f := AgentFacts{AgentID: a.ID, Name: a.Name, Tagline: a.Tagline, Tags: a.Tags, Price: a.Price,
		TotalExecutions: s.Total, SuccessRate: s.SuccessRate(), AvgExecutionTimeMS: s.AvgTimeMS()}
	if p, ok := a.Metered(); ok {
		f.Per1k, f.Cap = &p.Per1k, &p.Max
	}
	return f
}

// NewAgentListing is the full listing of it, whose statistics are env's.
func NewAgentListing(it crtx.AgentListItem, env crtx.Environment, l crtx.Links) AgentListing {
	a, s := it.Agent, it.Stats
	return AgentListing{
		AgentFacts: newAgentFacts(a, s),
		Creator:    CreatorInfo{Pubkey: a.Creator, DisplayName: it.Creator.ShownName(), Verified: it.Creator.Verified},
		Status:     a.Status, Description: a.Description, InputSchema: a.InputSchema, OutputSchema: a.OutputSchema,
		SuccessfulExecutions: s.Successful, DisputeCount: s.Disputes, InvalidInputCount: s.Rejected,
		ExampleTask: a.Example.Task, ExampleParameters: a.Example.Parameters,
		OnChainListing: l.Listing(a), CreatedAt: a.CreatedAt,
		PricingModel: a.PricingModel, TimeoutSeconds: a.TimeoutSeconds, Environment: env,
	}
}
