package chain

import (
	"context"
	"fmt"
	"time"

	"github.com/gagliardetto/solana-go"
	memoprog "github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// SignTransfer signs, and does not send, a transaction that moves amount
// from the treasury's token account to wallet's. It does not create the
// account: the treasury would pay its rent, which the wallet could take back
// by closing it, withdrawal after withdrawal; a transfer to a missing
// account fails on the chain and is refunded. The destination is derived from
// the wallet here, never taken from a caller. An SPL Memo of memo, signed
// by the treasury, goes first: it names the withdrawal on the chain, and it
// keeps two withdrawals of one amount to one wallet, signed on one
// blockhash, from being the same transaction, which would land only once.
func (c *Client) SignTransfer(ctx context.Context, wallet string, amount crtx.USDC, memo string) (crtx.SignedTransfer, error) {
	if amount <= 0 {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: %s", ErrAmount, amount)
	}
	w, err := solana.PublicKeyFromBase58(wallet)
	if err != nil {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: wallet %q: %w", ErrAddress, wallet, err)
	}
	dest, _, err := solana.FindAssociatedTokenAddress(w, c.mint)
	if err != nil {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: wallet %q: %w", ErrAddress, wallet, err)
	}
	payer := c.treasury.PublicKey()
	note, err := memoprog.NewMemoInstruction([]byte(memo), payer).ValidateAndBuild()
	if err != nil {
		return crtx.SignedTransfer{}, fmt.Errorf("withdrawal memo %q: %w", memo, err)
	}
	tx, err := sign(ctx, c.rpc, []solana.Instruction{
		note,
		token.NewTransferCheckedInstruction(uint64(amount), Decimals, c.tokenAccount, c.mint, dest, payer, nil).Build(),
	}, c.treasury)
	if err != nil {
		return crtx.SignedTransfer{}, err
	}
	return crtx.SignedTransfer{Signature: tx.sig.String(), Raw: tx.raw, LastValidBlockHeight: tx.lastValid}, nil
}

// Send submits signed bytes without preflight: whether they landed, failed
// or expired is read from Status and BlockHeight, so a transfer that fails
// lands with its reason, and the same bytes sent again are the same
// transaction, which lands at most once. A node that refuses them because
// it already holds them has not failed: the refusal is checked against the
// signature's status, as not every node says so in a structured error.
func (c *Client) Send(ctx context.Context, raw []byte) error {
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSigned, err)
	}
	if len(tx.Signatures) == 0 {
		return ErrNotSigned
	}
	_, err = c.rpc.SendRawTransactionWithOpts(ctx, raw, rpc.TransactionOpts{SkipPreflight: true})
	if err == nil || alreadyProcessed(err) {
		return nil
	}
	// A node may refuse a copy of a transaction it is still processing,
	// before its status is served: the status is given a moment.
	for range 5 {
		if st, serr := status(ctx, c.rpc, tx.Signatures[0]); serr == nil && st.Found {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("sending %s: %w", tx.Signatures[0], err)
}
