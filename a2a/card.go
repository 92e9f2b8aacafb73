package a2a

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
)

// schemeName names the API key scheme in a card's securitySchemes.
const schemeName = "crtx_api_key"

// skillID is the one skill of every card: running the agent.
const skillID = "execute"

// PricingExtension is the URI of the card extension that carries an agent's
// price and track record. A client matches extensions by URI, so it is the
// same on every marketplace: the section of the project's documentation
// that defines it.
const PricingExtension = "https://github.com/crtx-market/crtx/blob/main/docs/integrations.md#a2a-pricing"

// card serves an agent's signed card: any active or paused agent has one;
// a delisted, suspended or unknown one is agent_not_found (404), as its
// REST listing is.
func (s *server) card(w http.ResponseWriter, r *http.Request) {
	b, err := s.cardJSON(r.Context(), r.PathValue("agent_id"))
	if err != nil {
		s.gate.Refuse(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// A card is public: any site's agent may read it.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Write(b)
}

func (s *server) cardJSON(ctx context.Context, agentID string) ([]byte, error) {
	it, err := s.m.Catalog.Agent(ctx, agentID, crtx.Mainnet)
	if err != nil {
		return nil, err
	}
	l := api.NewAgentListing(it, crtx.Mainnet, s.m.Links())
	lat, err := s.latency.get(ctx, agentID, func(ctx context.Context) (market.Latency, error) {
		return s.m.Catalog.Latency(ctx, l.Creator.Pubkey, agentID)
	})
	if err != nil {
		return nil, err
	}
	return s.signer.sign(s.agentCard(l, lat))
}

// agentCard describes a listing as A2A 1.0 does. Its statistics are
// mainnet's: devnet is for trying agents, and its numbers say little.
func (s *server) agentCard(l api.AgentListing, lat market.Latency) *a2a.AgentCard {
	endpoint := s.publicURL + "/a2a/" + l.AgentID
	sch := readSchema(l.InputSchema)
	inputModes := []string{"text/plain"}
	if len(sch.Properties) > 0 {
		inputModes = append(inputModes, "application/json")
	}
	outputModes := []string{"text/plain", "application/json"}
	description := l.Description
	if description == "" {
		description = l.Tagline
	}
	tags := l.Tags
	if tags == nil {
		tags = []string{}
	}
	return &a2a.AgentCard{
		Name:             l.Name,
		Description:      description,
		Version:          version(l),
		Provider:         &a2a.AgentProvider{Org: "crtx", URL: s.publicURL},
		DocumentationURL: s.publicURL + "/agents/" + l.AgentID,
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(endpoint, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(endpoint, a2a.TransportProtocolHTTPJSON),
		},
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true, Extensions: []a2a.AgentExtension{s.pricing(l, lat)}},
		SecuritySchemes: a2a.NamedSecuritySchemes{schemeName: a2a.HTTPAuthSecurityScheme{
			Scheme: "Bearer", BearerFormat: "crtx API key",
			Description: "A crtx API key, sent as Authorization: Bearer <key>: crtx_live_… pays from the wallet's mainnet " +
				"balance, crtx_test_… from its devnet balance. Keys are made at " + s.publicURL + "/dashboard/keys.",
		}},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{schemeName: a2a.SecuritySchemeScopes{}}},
		DefaultInputModes:    inputModes,
		DefaultOutputModes:   outputModes,
		Skills: []a2a.AgentSkill{{
			ID:          skillID,
			Name:        l.Name,
			Description: skillDescription(l, sch),
			Tags:        tags,
			Examples:    sch.examples(),
			InputModes:  inputModes,
			OutputModes: outputModes,
		}},
	}
}

// pricing is the card extension that says what a call costs and how the
// agent has done. Numbers a client must not round (money) are decimal
// strings; the rest are JSON numbers. p50_ms and p95_ms are null until the
// agent has completed a call on mainnet.
func (s *server) pricing(l api.AgentListing, lat market.Latency) a2a.AgentExtension {
	var p50, p95 any
	if lat.Samples > 0 {
		p50, p95 = lat.P50MS, lat.P95MS
	}
	params := map[string]any{
		"price_per_call_usdc": decimal(l.Price),
		"currency":            "USDC",
		"pricing_model":       l.PricingModel,
		"status":              string(l.Status),
		"timeout_seconds":     l.TimeoutSeconds,
		"executions":          l.TotalExecutions,
		"success_rate":        l.SuccessRate,
		"p50_ms":              p50,
		"p95_ms":              p95,
		"latency_samples":     lat.Samples,
		"creator":             l.Creator.Pubkey,
		"creator_verified":    l.Creator.Verified,
	}
	if m, ok := l.Metered(); ok {
		// Priced per token: price_per_call_usdc is the base.
		params["price_per_1k_tokens_usdc"], params["max_price_per_call_usdc"] = decimal(m.Per1k), decimal(m.Max)
	}
	return a2a.AgentExtension{
		URI: PricingExtension,
		Description: "Each call is paid in USDC from the API key's wallet (mainnet for crtx_live_ keys, devnet for crtx_test_), " +
			"held in escrow while the agent works and released to its creator when the call completes, or refunded when it fails. " +
			"Statistics are mainnet's.",
		Params: params,
	}
}

// version names the listing's terms: it changes when the creator edits
// any of them, and not as the statistics move.
func version(l api.AgentListing) string {
	b, err := crtx.Canonical(struct {
		Name, Tagline, Description, PricingModel string
		Tags                                     []string
		InputSchema, OutputSchema                json.RawMessage
		Price                                    crtx.USDC
		TimeoutSeconds                           int
		Per1k                                    *crtx.USDC `json:",omitempty"`
		Cap                                      *crtx.USDC `json:",omitempty"`
	}{l.Name, l.Tagline, l.Description, l.PricingModel, l.Tags, l.InputSchema, l.OutputSchema, l.Price, l.TimeoutSeconds, l.Per1k, l.Cap})
	if err != nil {
		// A stored schema is JSON the market checked; were it not, the
		// card still has a version, just one that ignores the schemas.
		b = []byte(l.Name + "\x00" + l.Description + "\x00" + l.Price.String())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// decimal writes an amount with all six decimals: A2A clients read data
// as JSON numbers, which a float would round.
func decimal(u crtx.USDC) string {
	return fmt.Sprintf("%d.%06d", u/crtx.MicroPerUSDC, u%crtx.MicroPerUSDC)
}

// schema is what a card says of an input schema: its properties, which are
// required, and examples. A schema this does not understand (a $ref, a
// boolean) leaves it empty; the card then points at the listing.
type schema struct {
	Properties map[string]property `json:"properties"`
	Required   []string            `json:"required"`
	Examples   []json.RawMessage   `json:"examples"`
}

type property struct {
	Type        json.RawMessage   `json:"type"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Default     json.RawMessage   `json:"default"`
	Examples    []json.RawMessage `json:"examples"`
}

func readSchema(raw json.RawMessage) schema {
	var s schema
	if json.Unmarshal(raw, &s) != nil {
		return schema{}
	}
	return s
}

// skillDescription tells a calling agent how to call: the task as text,
// the parameters as a data part, property by property.
func skillDescription(l api.AgentListing, s schema) string {
	var b strings.Builder
	if l.Tagline != "" {
		b.WriteString(l.Tagline + "\n\n")
	}
	b.WriteString("Send the task as text parts (joined with newlines). ")
	if len(s.Properties) == 0 {
		b.WriteString("This agent takes no parameters.")
	} else {
		b.WriteString("Send the parameters as one data part, a JSON object:")
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			p := s.Properties[name]
			b.WriteString("\n- " + name + " (" + typeName(p.Type))
			if slices.Contains(s.Required, name) {
				b.WriteString(", required")
			}
			b.WriteString(")")
			if p.Description != "" {
				b.WriteString(": " + p.Description)
			}
			if len(p.Enum) > 0 {
				b.WriteString(" One of " + joinJSON(p.Enum) + ".")
			}
			if len(p.Default) > 0 {
				b.WriteString(" Default " + compact(p.Default) + ".")
			}
		}
	}
	price := l.Price.String() + " USDC"
	if m, ok := l.Metered(); ok {
		price = m.String() + ", charged from the usage its creator signs " +
			"(metadata may set max_price_usdc, a decimal string, to hold and pay at most that)"
	}
	fmt.Fprintf(&b, "\n\nEach call costs %s. Message metadata may set max_cost_usdc (a decimal string: the call is refused, "+
		"uncharged, if the price is above it) and timeout_seconds (1 to %d). The messageId is the idempotency key: "+
		"the same message sent again is answered with the same task, charged once.", price, l.TimeoutSeconds)
	return b.String()
}

// examples are the schema's own examples, else one made of its
// properties' examples and defaults, as the data part to send.
func (s schema) examples() []string {
	var out []string
	for _, ex := range s.Examples {
		if len(out) == 3 {
			break
		}
		if c := compact(ex); strings.HasPrefix(c, "{") {
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		return out
	}
	made := map[string]json.RawMessage{}
	for name, p := range s.Properties {
		switch {
		case len(p.Examples) > 0:
			made[name] = p.Examples[0]
		case len(p.Default) > 0:
			made[name] = p.Default
		}
	}
	if len(made) == 0 {
		return nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(made) != nil {
		return nil
	}
	return []string{strings.TrimSuffix(b.String(), "\n")}
}

func typeName(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return strings.Join(many, " or ")
	}
	return "any JSON"
}

func joinJSON(values []json.RawMessage) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = compact(v)
	}
	return strings.Join(parts, ", ")
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
