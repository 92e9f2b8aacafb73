package client

import (
	"context"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// KeyParams create an API key.
type KeyParams = api.CreateKeyRequest

// CreateKey makes an API key (session required).
func (c *Client) CreateKey(ctx context.Context, p KeyParams) (api.CreatedKey, error) {
	return do[api.CreatedKey](ctx, c, "POST", "/v1/keys", p)
}

// Keys lists the wallet's API keys (session required).
func (c *Client) Keys(ctx context.Context) ([]crtx.APIKey, error) {
	var out api.KeyList
	err := c.call(ctx, "GET", "/v1/keys", nil, &out)
	return out.Keys, err
}

// RevokeKey revokes an API key at once (session required).
func (c *Client) RevokeKey(ctx context.Context, id string) (crtx.APIKey, error) {
	return do[crtx.APIKey](ctx, c, "DELETE", "/v1/keys/"+url.PathEscape(id), nil)
}
