package client

import (
	"context"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// CreateListing lists an agent (creator session required).
func (c *Client) CreateListing(ctx context.Context, p crtx.ListingParams) (api.CreatorAgent, error) {
	return do[api.CreatorAgent](ctx, c, "POST", "/v1/creator/agents", p)
}

// UpdateListing changes a listing; nil fields stay as they are.
func (c *Client) UpdateListing(ctx context.Context, id string, p crtx.ListingParams) (api.CreatorAgent, error) {
	return do[api.CreatorAgent](ctx, c, "PATCH", "/v1/creator/agents/"+url.PathEscape(id), p)
}

// Delist takes an agent out of the catalog.
func (c *Client) Delist(ctx context.Context, id string) (api.CreatorAgent, error) {
	return do[api.CreatorAgent](ctx, c, "DELETE", "/v1/creator/agents/"+url.PathEscape(id), nil)
}

// CreatorAgents lists the creator's own agents, every status included.
func (c *Client) CreatorAgents(ctx context.Context) ([]api.CreatorAgent, error) {
	var out api.CreatorAgentList
	err := c.call(ctx, "GET", "/v1/creator/agents", nil, &out)
	return out.Agents, err
}

// SetDisplayName sets the creator's public name.
func (c *Client) SetDisplayName(ctx context.Context, name string) (api.CreatorProfile, error) {
	return do[api.CreatorProfile](ctx, c, "PUT", "/v1/creator/profile", map[string]string{"display_name": name})
}

// TestExecution runs the Test Execution tool against an endpoint.
func (c *Client) TestExecution(ctx context.Context, endpoint, publicKey string) (api.TestReport, error) {
	return do[api.TestReport](ctx, c, "POST", "/v1/creator/test-execution",
		map[string]string{"endpoint_url": endpoint, "signing_public_key": publicKey})
}

// CreatorEarnings reads the creator's earnings in env (creator session).
func (c *Client) CreatorEarnings(ctx context.Context, env crtx.Environment) (crtx.Earnings, error) {
	return do[crtx.Earnings](ctx, c, "GET", "/v1/creator/earnings?environment="+string(env), nil)
}

// CreatorExecutions lists executions of the creator's agents; q holds the
// filters of GET /v1/executions and environment.
func (c *Client) CreatorExecutions(ctx context.Context, q url.Values) (api.ExecutionPage, error) {
	path := withQuery("/v1/creator/executions", q)
	return do[api.ExecutionPage](ctx, c, "GET", path, nil)
}

// CreatorDisputes lists disputes about the creator's agents (creator session).
func (c *Client) CreatorDisputes(ctx context.Context) ([]api.DisputeInfo, error) {
	var out api.DisputeList
	err := c.call(ctx, "GET", "/v1/creator/disputes", nil, &out)
	return out.Disputes, err
}

// RespondToDispute records the creator's answer (creator session).
func (c *Client) RespondToDispute(ctx context.Context, id, text string) (api.DisputeInfo, error) {
	return do[api.DisputeInfo](ctx, c, "POST", "/v1/creator/disputes/"+url.PathEscape(id)+"/response", map[string]string{"text": text})
}
