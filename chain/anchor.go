package chain

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/memo"

	"github.com/crtx-market/crtx"
)

// Anchor writes memo in an SPL Memo instruction the authority signs, so a
// verifier holding the authority's published key sees who wrote it, the
// treasury paying the fee; it returns once the transaction is finalized.
func (c *Client) Anchor(ctx context.Context, text string, authority ed25519.PrivateKey) (crtx.Anchor, error) {
	if len(authority) != ed25519.PrivateKeySize {
		return crtx.Anchor{}, fmt.Errorf("%w: the anchor authority is not an Ed25519 private key", ErrConfig)
	}
	auth := solana.PrivateKey(authority)
	inst, err := memo.NewMemoInstruction([]byte(text), auth.PublicKey()).ValidateAndBuild()
	if err != nil {
		return crtx.Anchor{}, fmt.Errorf("anchor memo %q: %w", text, err)
	}
	sig, slot, err := c.submit(ctx, []solana.Instruction{inst}, c.treasury, auth)
	if err != nil {
		return crtx.Anchor{}, fmt.Errorf("anchoring %q: %w", text, err)
	}
	return crtx.Anchor{Signature: sig.String(), Slot: slot, Cluster: c.cluster}, nil
}
