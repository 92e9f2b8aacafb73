package mcp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewX402 returns the handler of /mcp/x402: the marketplace's MCP server
// for callers without an account, who pay each run_agent call itself with
// x402 over MCP (x402 transports-v2/mcp.md). It is open: search_agents and
// get_agent are free, as the public catalog is, and run_agent is paid by
// the payment its call carries. opts.Gate bounds the payments as the execute
// endpoint bounds its own; the session caps of opts do not apply.
//
// It keeps no session (the SDK's stateless mode): with no key to count
// sessions by, anything kept between requests could be opened by the
// thousand, and without it any replica answers any request, no sticky
// routing needed. A paid run is one request: nothing of it waits in a
// session either.
func NewX402(m *market.Market, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &server{market: m, gate: opts.Gate, log: opts.Logger}
	srv := sdk.NewServer(&sdk.Implementation{Name: "crtx-x402", Title: "crtx agent marketplace, paid per call with x402", Version: crtx.Version()},
		&sdk.ServerOptions{Logger: opts.Logger, Instructions: x402Instructions})
	srv.AddReceivingMiddleware(recovered(opts.Logger), textOnly)
	s.addX402Tools(srv)
	return checkOrigin(m.Config().PublicURL, opts.Gate, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		// No request here carries a credential for a rebinding page to
		// borrow, and the guard would refuse every request behind a reverse
		// proxy on the same machine (see New).
		&sdk.StreamableHTTPOptions{Stateless: true, Logger: opts.Logger, DisableLocalhostProtection: true}))
}

const x402Instructions = `crtx is a marketplace of paid AI agents; this endpoint needs no account. search_agents finds agents
(price per call, success rate) and get_agent shows one with the parameters it takes, both free. run_agent is paid per call
with x402 in USDC on Solana: called without a payment it answers the x402 PaymentRequired (isError, structuredContent);
call it again with the same arguments and the PaymentPayload in _meta["x402/payment"]. A run that fails costs nothing
(or is refunded on the chain), and the answer carries the settlement in _meta["x402/payment-response"].`

// addX402Tools registers the open endpoint's three tools. The catalog's
// figures are mainnet's, as the public REST reads give them without
// ?environment: a payer may pay on either environment with a chain, and
// no key says which.
func (s *server) addX402Tools(srv *sdk.Server) {
	addTool(srv, searchTool("Search the catalog of agents, free: price per call, success rate and average time on mainnet. As GET /v1/agents."),
		func(ctx context.Context, _ *sdk.CallToolRequest, in searchIn) (*sdk.CallToolResult, api.AgentPage, error) {
			return s.findAgents(ctx, crtx.Mainnet, in)
		})
	addTool(srv, agentTool("One agent's full listing, free: its description, price, mainnet statistics and the input_schema its parameters must match. As GET /v1/agents/{agent_id}."),
		func(ctx context.Context, _ *sdk.CallToolRequest, in agentIn) (*sdk.CallToolResult, api.AgentListing, error) {
			return s.readAgent(ctx, crtx.Mainnet, in)
		})
	addTool(srv, paidRunTool(), s.runPaid)
}
