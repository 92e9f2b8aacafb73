package client

import (
	"context"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Agents lists active agents; q holds the query parameters of GET /v1/agents
// (limit, offset, tags, min_success_rate, min_executions, verified_only,
// sort, q, environment).
func (c *Client) Agents(ctx context.Context, q url.Values) (api.AgentPage, error) {
	path := withQuery("/v1/agents", q)
	return do[api.AgentPage](ctx, c, "GET", path, nil)
}

// Agent reads an agent's full listing with its statistics in env (mainnet
// when empty).
func (c *Client) Agent(ctx context.Context, id string, env crtx.Environment) (api.AgentListing, error) {
	path := "/v1/agents/" + url.PathEscape(id)
	if env != "" {
		path += "?environment=" + string(env)
	}
	return do[api.AgentListing](ctx, c, "GET", path, nil)
}
