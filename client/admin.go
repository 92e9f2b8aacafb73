package client

import (
	"context"
	"net/url"

	"github.com/crtx-market/crtx/api"
)

// SetVerified sets or clears a creator's badge (admin token).
func (c *Client) SetVerified(ctx context.Context, wallet string, verified bool) (api.CreatorProfile, error) {
	action := map[bool]string{true: "verify", false: "unverify"}[verified]
	return do[api.CreatorProfile](ctx, c, "POST", "/v1/admin/creators/"+url.PathEscape(wallet)+"/"+action, nil)
}

// Suspend suspends an agent or lifts its suspension (admin token).
func (c *Client) Suspend(ctx context.Context, agentID string, suspended bool) (api.CreatorAgent, error) {
	action := map[bool]string{true: "suspend", false: "unsuspend"}[suspended]
	return do[api.CreatorAgent](ctx, c, "POST", "/v1/admin/agents/"+url.PathEscape(agentID)+"/"+action, nil)
}
