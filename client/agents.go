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
	var out api.AgentPage
	path := "/v1/agents"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}

// Agent reads an agent's full listing with its statistics in env (mainnet
// when empty).
func (c *Client) Agent(ctx context.Context, id string, env crtx.Environment) (api.AgentListing, error) {
	var out api.AgentListing
	path := "/v1/agents/" + url.PathEscape(id)
	if env != "" {
		path += "?environment=" + string(env)
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}
