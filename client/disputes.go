package client

import (
	"context"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// OpenDispute disputes a completed execution (API key of the paying wallet).
func (c *Client) OpenDispute(ctx context.Context, executionID string, p crtx.DisputeParams) (api.DisputeInfo, error) {
	return do[api.DisputeInfo](ctx, c, "POST", "/v1/executions/"+url.PathEscape(executionID)+"/disputes", p)
}

// AdminDisputes lists disputes with a status ("" for all) (admin token).
func (c *Client) AdminDisputes(ctx context.Context, status string) ([]api.DisputeInfo, error) {
	var out api.DisputeList
	path := "/v1/admin/disputes"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	err := c.call(ctx, "GET", path, nil, &out)
	return out.Disputes, err
}

// ResolveDispute applies the operator's ruling (admin token).
func (c *Client) ResolveDispute(ctx context.Context, id string, p crtx.ResolveParams) (api.DisputeInfo, error) {
	return do[api.DisputeInfo](ctx, c, "POST", "/v1/admin/disputes/"+url.PathEscape(id)+"/resolve", p)
}
