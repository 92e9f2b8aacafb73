package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/verify"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type searchIn struct {
	Q     string   `json:"q,omitempty" jsonschema:"words to find in agents' names, taglines and descriptions"`
	Tags  []string `json:"tags,omitempty" jsonschema:"only agents carrying all of these tags"`
	Sort  string   `json:"sort,omitempty" jsonschema:"the order; by relevance when q is given, else by total_executions"`
	Limit int      `json:"limit,omitempty" jsonschema:"how many agents, 1 to 100; 20 if absent"`
}

type agentIn struct {
	AgentID string `json:"agent_id" jsonschema:"the agent's id, as search_agents gives it"`
}

type executionIn struct {
	ExecutionID string `json:"execution_id" jsonschema:"the execution's id, as run_agent gives it"`
}

var sorts = []string{crtx.SortTotalExecutions, crtx.SortSuccessRate, crtx.SortPriceAsc, crtx.SortPriceDesc, crtx.SortCreatedAt}

// addTools registers the five tools. Their input schemas bound what the
// REST interface bounds, so the SDK refuses what REST would refuse before a
// handler runs.
func (s *server) addTools(srv *sdk.Server) {
	addTool(srv, searchTool("Search the catalog of agents this API key's environment offers: price per call, success rate, average time. As GET /v1/agents."),
		s.search)
	addTool(srv, agentTool("One agent's full listing: its description, price, statistics and the input_schema its parameters must match. As GET /v1/agents/{agent_id}."),
		s.getAgent)
	addTool(srv, runTool(), s.run)
	addTool(srv, &sdk.Tool{Name: "get_execution", Title: "Get an execution",
		Description: "An execution of this API key: status, result, cost and its split, and where it is recorded. As GET /v1/executions/{execution_id}.",
		InputSchema: schemaFor[executionIn](), OutputSchema: schemaFor[api.ExecutionRecord](), Annotations: readOnly},
		s.getExecution)
	addTool(srv, &sdk.Tool{Name: "verify_execution", Title: "Verify an execution",
		Description: "Check a completed execution as a careful caller would: the published result hashes to result_hash and has its CID, the ledger's ExecutionRecord commits that hash, the creator's signature holds under the listing's key, and the record is in a block signed by the ledger authority. Waits up to a minute for the block.",
		InputSchema: schemaFor[executionIn](), OutputSchema: schemaFor[verify.Report](), Annotations: readOnly},
		s.verify)
}

// searchTool is search_agents, described for its endpoint.
func searchTool(description string) *sdk.Tool {
	in := schemaFor[searchIn]()
	property(in, "q").MaxLength = ptr(200)
	property(in, "tags").MaxItems = ptr(10)
	property(in, "tags").Items.MaxLength = ptr(32)
	property(in, "sort").Enum = anys(sorts)
	property(in, "limit").Minimum, property(in, "limit").Maximum = ptr(1.0), ptr(100.0)
	return &sdk.Tool{Name: "search_agents", Title: "Search agents", Description: description,
		InputSchema: in, OutputSchema: schemaFor[api.AgentPage](), Annotations: readOnly}
}

// agentTool is get_agent, described for its endpoint.
func agentTool(description string) *sdk.Tool {
	listing := schemaFor[api.AgentListing]()
	// A listing's schemas are JSON Schema objects (the listing rules
	// refuse anything else), whatever their content.
	*property(listing, "input_schema") = jsonschema.Schema{Type: "object", Description: "the JSON Schema the parameters of run_agent must match"}
	*property(listing, "output_schema") = jsonschema.Schema{Type: "object", Description: "the JSON Schema of the agent's result, as its creator describes it"}
	return &sdk.Tool{Name: "get_agent", Title: "Get an agent", Description: description,
		InputSchema: schemaFor[agentIn](), OutputSchema: listing, Annotations: readOnly}
}

var readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func (s *server) search(ctx context.Context, _ *sdk.CallToolRequest, in searchIn) (*sdk.CallToolResult, api.AgentPage, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, api.AgentPage{}, s.toolError(err)
	}
	return s.findAgents(ctx, c.p.Environment(), in)
}

// findAgents is search_agents with the statistics of env.
func (s *server) findAgents(ctx context.Context, env crtx.Environment, in searchIn) (*sdk.CallToolResult, api.AgentPage, error) {
	q := crtx.AgentQuery{Environment: env, Q: in.Q, Sort: in.Sort, Limit: in.Limit}
	if q.Limit == 0 {
		q.Limit = 20
	}
	for _, t := range in.Tags {
		if !slices.Contains(q.Tags, t) {
			q.Tags = append(q.Tags, t)
		}
	}
	page, err := s.market.Catalog.Agents(ctx, q)
	if err != nil {
		return nil, api.AgentPage{}, s.toolError(err)
	}
	return nil, api.NewAgentPage(page), nil
}

func (s *server) getAgent(ctx context.Context, _ *sdk.CallToolRequest, in agentIn) (*sdk.CallToolResult, api.AgentListing, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, api.AgentListing{}, s.toolError(err)
	}
	return s.readAgent(ctx, c.p.Environment(), in)
}

// readAgent is get_agent with the statistics of env.
func (s *server) readAgent(ctx context.Context, env crtx.Environment, in agentIn) (*sdk.CallToolResult, api.AgentListing, error) {
	a, err := s.market.Catalog.Agent(ctx, in.AgentID, env)
	if err != nil {
		return nil, api.AgentListing{}, s.toolError(err)
	}
	return nil, api.NewAgentListing(a, env, s.market.Links()), nil
}

func (s *server) getExecution(ctx context.Context, _ *sdk.CallToolRequest, in executionIn) (*sdk.CallToolResult, api.ExecutionRecord, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, api.ExecutionRecord{}, s.toolError(err)
	}
	e, result, err := s.market.Executions.GetExecution(ctx, c.p, in.ExecutionID)
	if err != nil {
		return nil, api.ExecutionRecord{}, s.toolError(err)
	}
	return nil, api.NewExecutionRecord(e, result, s.market.Links()), nil
}

// toolError turns an error into the tool error an MCP client shows its
// model: the REST error's code and message. Anything that is not a
// marketplace error is logged and answered as internal_error, never raw.
func (s *server) toolError(err error) error {
	if err == nil {
		return nil
	}
	var e *crtx.Error
	if !errors.As(err, &e) {
		if errors.Is(err, context.Canceled) { // the client cancelled: no one reads the answer
			s.log.Debug("mcp tool", "err", err)
		} else {
			s.log.Error("mcp tool", "err", err)
		}
		return crtx.Errorf(crtx.CodeInternal, "internal error")
	}
	if e.ExecutionID != "" && !strings.Contains(e.Message, e.ExecutionID) {
		return fmt.Errorf("%w (execution %s)", e, e.ExecutionID)
	}
	return e
}
