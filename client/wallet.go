package client

import (
	"context"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Wallet returns the balances of the client's wallet.
func (c *Client) Wallet(ctx context.Context) (api.WalletResponse, error) {
	return do[api.WalletResponse](ctx, c, "GET", "/v1/wallet", nil)
}

// Airdrop credits devnet funds to wallet (no credential needed).
func (c *Client) Airdrop(ctx context.Context, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	return do[api.FundingResponse](ctx, c, "POST", "/v1/devnet/airdrop", map[string]any{"wallet": wallet, "amount_usdc": amount})
}

// Deposit credits funds through the admin API (admin token required).
func (c *Client) Deposit(ctx context.Context, env crtx.Environment, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	return c.adminFunding(ctx, "/v1/admin/deposits", env, wallet, amount)
}

// Withdraw debits funds through the admin API (admin token required).
func (c *Client) Withdraw(ctx context.Context, env crtx.Environment, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	return c.adminFunding(ctx, "/v1/admin/withdrawals", env, wallet, amount)
}

func (c *Client) adminFunding(ctx context.Context, path string, env crtx.Environment, wallet string, amount crtx.USDC) (api.FundingResponse, error) {
	return do[api.FundingResponse](ctx, c, "POST", path, map[string]any{"environment": env, "wallet": wallet, "amount_usdc": amount})
}
