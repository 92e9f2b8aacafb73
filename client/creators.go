package client

import (
	"context"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// CreateListing lists an agent (creator session required).
func (c *Client) CreateListing(ctx context.Context, p crtx.ListingParams) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	err := c.call(ctx, "POST", "/v1/creator/agents", p, &out)
	return out, err
}

// UpdateListing changes a listing; nil fields stay as they are.
func (c *Client) UpdateListing(ctx context.Context, id string, p crtx.ListingParams) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	err := c.call(ctx, "PATCH", "/v1/creator/agents/"+url.PathEscape(id), p, &out)
	return out, err
}

// Delist takes an agent out of the catalog.
func (c *Client) Delist(ctx context.Context, id string) (api.CreatorAgent, error) {
	var out api.CreatorAgent
	err := c.call(ctx, "DELETE", "/v1/creator/agents/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CreatorAgents lists the creator's own agents, every status included.
func (c *Client) CreatorAgents(ctx context.Context) ([]api.CreatorAgent, error) {
	var out api.CreatorAgentList
	err := c.call(ctx, "GET", "/v1/creator/agents", nil, &out)
	return out.Agents, err
}

// SetDisplayName sets the creator's public name.
func (c *Client) SetDisplayName(ctx context.Context, name string) (api.CreatorProfile, error) {
	var out api.CreatorProfile
	err := c.call(ctx, "PUT", "/v1/creator/profile", map[string]string{"display_name": name}, &out)
	return out, err
}

// TestExecution runs the Test Execution tool against an endpoint.
func (c *Client) TestExecution(ctx context.Context, endpoint, publicKey string) (api.TestReport, error) {
	var out api.TestReport
	err := c.call(ctx, "POST", "/v1/creator/test-execution",
		map[string]string{"endpoint_url": endpoint, "signing_public_key": publicKey}, &out)
	return out, err
}

// CreatorEarnings reads the creator's earnings in env (creator session).
func (c *Client) CreatorEarnings(ctx context.Context, env crtx.Environment) (crtx.Earnings, error) {
	var out crtx.Earnings
	err := c.call(ctx, "GET", "/v1/creator/earnings?environment="+string(env), nil, &out)
	return out, err
}

// CreatorExecutions lists executions of the creator's agents; q holds the
// filters of GET /v1/executions and environment.
func (c *Client) CreatorExecutions(ctx context.Context, q url.Values) (api.ExecutionPage, error) {
	var out api.ExecutionPage
	path := "/v1/creator/executions"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out, err
}

// CreatorDisputes lists disputes about the creator's agents (creator session).
func (c *Client) CreatorDisputes(ctx context.Context) ([]api.DisputeInfo, error) {
	var out api.DisputeList
	err := c.call(ctx, "GET", "/v1/creator/disputes", nil, &out)
	return out.Disputes, err
}

// RespondToDispute records the creator's answer (creator session).
func (c *Client) RespondToDispute(ctx context.Context, id, text string) (api.DisputeInfo, error) {
	var out api.DisputeInfo
	err := c.call(ctx, "POST", "/v1/creator/disputes/"+url.PathEscape(id)+"/response", map[string]string{"text": text}, &out)
	return out, err
}
