package chain

import (
	"context"
	"fmt"
	"time"

	"github.com/gagliardetto/solana-go"
	memoprog "github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// SignTransfer signs, and does not send, a transaction that moves t.Amount
// from the treasury's token account to t.Wallet's, on the current nonce of
// t.NonceAccount (read from a node past slot t.After): it never expires, so
// the same bytes can be sent until they land, and they land once. It does
// not create the destination account: the treasury would pay its rent,
// which the wallet could take back by closing it, withdrawal after
// withdrawal; a transfer to a missing account fails on the chain. The
// destination is derived from the wallet here, never taken from a caller.
// An SPL Memo of t.Memo, signed by the treasury, follows the nonce's
// advance (which must come first): it names the withdrawal on the chain.
func (c *Client) SignTransfer(ctx context.Context, t crtx.Transfer) (crtx.SignedTransfer, error) {
	if t.Amount <= 0 {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: %s", ErrAmount, t.Amount)
	}
	w, err := solana.PublicKeyFromBase58(t.Wallet)
	if err != nil {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: wallet %q: %w", ErrAddress, t.Wallet, err)
	}
	dest, _, err := solana.FindAssociatedTokenAddress(w, c.mint)
	if err != nil {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: wallet %q: %w", ErrAddress, t.Wallet, err)
	}
	account, err := solana.PublicKeyFromBase58(t.NonceAccount)
	if err != nil || !solana.PublicKeySlice(c.nonces).Has(account) {
		return crtx.SignedTransfer{}, fmt.Errorf("%w: %q is not one of the treasury's nonce accounts", ErrConfig, t.NonceAccount)
	}
	nonce, err := c.nonce(ctx, account, t.After)
	if err != nil {
		return crtx.SignedTransfer{}, err
	}
	payer := c.treasury.PublicKey()
	note, err := memoprog.NewMemoInstruction([]byte(t.Memo), payer).ValidateAndBuild()
	if err != nil {
		return crtx.SignedTransfer{}, fmt.Errorf("withdrawal memo %q: %w", t.Memo, err)
	}
	tx, err := signOn(nonce, []solana.Instruction{
		system.NewAdvanceNonceAccountInstruction(account, solana.SysVarRecentBlockHashesPubkey, payer).Build(),
		note,
		token.NewTransferCheckedInstruction(uint64(t.Amount), Decimals, c.tokenAccount, c.mint, dest, payer, nil).Build(),
	}, c.treasury)
	if err != nil {
		return crtx.SignedTransfer{}, err
	}
	return crtx.SignedTransfer{Signature: tx.sig.String(), Raw: tx.raw, Nonce: nonce.String()}, nil
}

// Send submits signed bytes without preflight: whether they landed or
// failed is read from Status, so a transfer that fails lands with its
// reason. The same bytes sent again are the same transaction, which lands
// at most once. A node that refuses them because it holds them already has
// not failed: a refusal whose signature the node has seen is no error. Not
// every node says so in a form to read, so the caller never treats a
// refusal as proof of anything either: it sends again, or waits.
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
