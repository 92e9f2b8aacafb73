package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// NewDeposit asks to add amount to the wallet in env by a Solana Pay
// transfer: pay the answer's solana_pay_url from any Solana wallet.
func (c *Client) NewDeposit(ctx context.Context, env crtx.Environment, amount crtx.USDC) (api.Deposit, error) {
	return do[api.Deposit](ctx, c, "POST", "/v1/wallet/deposits", map[string]any{"environment": env, "amount_usdc": amount})
}

// GetDeposit returns a deposit with the payments credited to it.
func (c *Client) GetDeposit(ctx context.Context, id string) (api.Deposit, error) {
	return do[api.Deposit](ctx, c, "GET", "/v1/wallet/deposits/"+url.PathEscape(id), nil)
}

// Deposits lists the wallet's deposits in env, newest first.
func (c *Client) Deposits(ctx context.Context, env crtx.Environment, limit, offset int) (api.DepositPage, error) {
	return do[api.DepositPage](ctx, c, "GET", "/v1/wallet/deposits?"+pageQuery(env, limit, offset), nil)
}

// NewWithdrawal pays amount of the wallet's balance in env out to the
// wallet's own USDC token account (a session is required).
func (c *Client) NewWithdrawal(ctx context.Context, env crtx.Environment, amount crtx.USDC) (api.Withdrawal, error) {
	return do[api.Withdrawal](ctx, c, "POST", "/v1/wallet/withdrawals", map[string]any{"environment": env, "amount_usdc": amount})
}

// GetWithdrawal returns a withdrawal.
func (c *Client) GetWithdrawal(ctx context.Context, id string) (api.Withdrawal, error) {
	return do[api.Withdrawal](ctx, c, "GET", "/v1/wallet/withdrawals/"+url.PathEscape(id), nil)
}

// Withdrawals lists the wallet's withdrawals in env, newest first.
func (c *Client) Withdrawals(ctx context.Context, env crtx.Environment, limit, offset int) (api.WithdrawalPage, error) {
	return do[api.WithdrawalPage](ctx, c, "GET", "/v1/wallet/withdrawals?"+pageQuery(env, limit, offset), nil)
}

// Reserves compares each chain's treasury with what the ledger owes.
func (c *Client) Reserves(ctx context.Context) (api.Reserves, error) {
	return do[api.Reserves](ctx, c, "GET", "/v1/reserves", nil)
}

// Unattributed lists transfers into env's treasury that carry no deposit's
// reference (admin token required).
func (c *Client) Unattributed(ctx context.Context, env crtx.Environment, limit int) (api.Unattributed, error) {
	q := url.Values{"environment": {string(env)}, "limit": {strconv.Itoa(limit)}}
	return do[api.Unattributed](ctx, c, "GET", "/v1/admin/deposits/unattributed?"+q.Encode(), nil)
}

func pageQuery(env crtx.Environment, limit, offset int) string {
	q := url.Values{"limit": {strconv.Itoa(limit)}, "offset": {strconv.Itoa(offset)}}
	if env != "" {
		q.Set("environment", string(env))
	}
	return q.Encode()
}
