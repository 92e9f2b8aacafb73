package chain

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// Balance is what the treasury's token account holds: finalized, or
// confirmed when that is more. The ledger credits an x402 payment once it
// is confirmed (its payer waits for its result on it), some seconds
// before it is finalized; a withdrawal leaves the ledger only once
// finalized. Read at finalized alone, every x402 payment would show the
// reserves short for those seconds; the larger of the two counts each
// transfer in the direction the ledger already does.
func (c *Client) Balance(ctx context.Context) (crtx.USDC, error) {
	var most crtx.USDC
	for _, at := range []rpc.CommitmentType{rpc.CommitmentFinalized, rpc.CommitmentConfirmed} {
		out, err := c.rpc.GetTokenAccountBalance(ctx, c.tokenAccount, at)
		if err != nil {
			return 0, fmt.Errorf("reading the treasury's token balance: %w", err)
		}
		n, err := strconv.ParseInt(out.Value.Amount, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading the treasury's token balance %q: %w", out.Value.Amount, err)
		}
		most = max(most, crtx.USDC(n))
	}
	return most, nil
}

// FeeBalance is the treasury's SOL, in lamports, that pays the fees.
func (c *Client) FeeBalance(ctx context.Context) (uint64, error) {
	out, err := c.rpc.GetBalance(ctx, c.treasury.PublicKey(), rpc.CommitmentFinalized)
	if err != nil {
		return 0, fmt.Errorf("reading the treasury's SOL: %w", err)
	}
	return out.Value, nil
}
