package chain

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// Balance is what the treasury's token account holds.
func (c *Client) Balance(ctx context.Context) (crtx.USDC, error) {
	out, err := c.rpc.GetTokenAccountBalance(ctx, c.tokenAccount, rpc.CommitmentFinalized)
	if err != nil {
		return 0, fmt.Errorf("reading the treasury's token balance: %w", err)
	}
	n, err := strconv.ParseInt(out.Value.Amount, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading the treasury's token balance %q: %w", out.Value.Amount, err)
	}
	return crtx.USDC(n), nil
}

// FeeBalance is the treasury's SOL, in lamports, that pays the fees.
func (c *Client) FeeBalance(ctx context.Context) (uint64, error) {
	out, err := c.rpc.GetBalance(ctx, c.treasury.PublicKey(), rpc.CommitmentFinalized)
	if err != nil {
		return 0, fmt.Errorf("reading the treasury's SOL: %w", err)
	}
	return out.Value, nil
}
