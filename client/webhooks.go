package client

import (
	"context"

	"github.com/crtx-market/crtx/api"
)

// WebhookSecret returns the wallet's webhook signing secret ("whsec_…"),
// which svix and standardwebhooks take as given to verify deliveries.
func (c *Client) WebhookSecret(ctx context.Context) (string, error) {
	r, err := do[api.WebhookSecretResponse](ctx, c, "GET", "/v1/webhooks/default/secret", nil)
	return r.Key, err
}

// RotateWebhookSecret replaces the secret and returns the new one; the old
// one signs deliveries too for 24 hours.
func (c *Client) RotateWebhookSecret(ctx context.Context) (string, error) {
	r, err := do[api.WebhookSecretResponse](ctx, c, "POST", "/v1/webhooks/default/secret", nil)
	return r.Key, err
}
