package client

import (
	"context"
	"fmt"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Account reads a ledger account and its newest transactions.
func (c *Client) Account(ctx context.Context, env crtx.Environment, address string) (api.AccountView, error) {
	return do[api.AccountView](ctx, c, "GET", "/v1/ledger/"+string(env)+"/accounts/"+url.PathEscape(address), nil)
}

// Transaction reads a ledger transaction.
func (c *Client) Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error) {
	return do[crtx.LedgerTx](ctx, c, "GET", "/v1/ledger/"+string(env)+"/transactions/"+url.PathEscape(id), nil)
}

// Proof reads the inclusion proof of a sealed transaction.
func (c *Client) Proof(ctx context.Context, env crtx.Environment, id string) (crtx.Proof, error) {
	return do[crtx.Proof](ctx, c, "GET", "/v1/ledger/"+string(env)+"/transactions/"+url.PathEscape(id)+"/proof", nil)
}

// Block reads a sealed block and its transactions.
func (c *Client) Block(ctx context.Context, env crtx.Environment, height int64) (api.BlockView, error) {
	return do[api.BlockView](ctx, c, "GET", fmt.Sprintf("/v1/ledger/%s/blocks/%d", env, height), nil)
}

// VerifyTransaction fetches a transaction and its proof and checks them
// against the ledger authority key published by the marketplace.
func (c *Client) VerifyTransaction(ctx context.Context, env crtx.Environment, id string) error {
	wk, err := c.WellKnown(ctx)
	if err != nil {
		return err
	}
	authority, err := crtx.ParseAddress("ledger_authority_public_key", wk.AuthorityPublicKey)
	if err != nil {
		return err
	}
	t, err := c.Transaction(ctx, env, id)
	if err != nil {
		return err
	}
	p, err := c.Proof(ctx, env, id)
	if err != nil {
		return err
	}
	return crtx.VerifyProof(p, t, authority)
}
