package chain

import (
	"context"
	"fmt"
	"strconv"

	bin "github.com/gagliardetto/binary"
	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"
)

// Withdrawals are signed on durable nonces, not on recent blockhashes: a
// transaction on a blockhash expires, and deciding that an expired one
// never landed rests on a "not found" that a lagging or pruned RPC node
// also answers; a wrong one refunds a paid withdrawal or signs a second
// transfer beside the first. A transaction on a nonce never expires, so a
// withdrawal is signed once and its bytes are sent until the chain shows
// them landed. The nonce advances when they land, so they land at most
// once.
//
// The accounts are the treasury's, derived from it with a seed (no key to
// keep), and a withdrawal holds one from its signing until it is final:
// two transactions on one nonce value would let only one land.

// nonceSpace is a nonce account's size: version, state, authority, nonce,
// fee calculator.
const nonceSpace = 80

// DefaultNonceAccounts is how many withdrawals may be in flight at once
// in an environment when Config.NonceAccounts is not set.
const DefaultNonceAccounts = 8

// nonceSeed names the i-th nonce account of the treasury.
func nonceSeed(i int) string { return "crtx-nonce-" + strconv.Itoa(i) }

// NonceAccounts are the addresses of the treasury's nonce accounts, in
// order.
func (c *Client) NonceAccounts() []string {
	out := make([]string, len(c.nonces))
	for i, a := range c.nonces {
		out[i] = a.String()
	}
	return out
}

func nonceAccounts(treasury solana.PublicKey, n int) ([]solana.PublicKey, error) {
	out := make([]solana.PublicKey, n)
	for i := range out {
		a, err := solana.CreateWithSeed(treasury, nonceSeed(i), solana.SystemProgramID)
		if err != nil {
			return nil, fmt.Errorf("%w: nonce account %d: %w", ErrConfig, i, err)
		}
		out[i] = a
	}
	return out, nil
}

// EnsureNonceAccounts creates the treasury's nonce accounts that are
// missing, the treasury paying their rent (about 0.0015 SOL each), and
// waits until they are finalized.
func (c *Client) EnsureNonceAccounts(ctx context.Context) error {
	payer := c.treasury.PublicKey()
	rent, err := c.rpc.GetMinimumBalanceForRentExemption(ctx, nonceSpace, rpc.CommitmentConfirmed)
	if err != nil {
		return fmt.Errorf("reading the rent of a nonce account: %w", err)
	}
	var create []solana.Instruction
	for i, a := range c.nonces {
		info, err := c.rpc.GetAccountInfoWithOpts(ctx, a, &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
		switch {
		case isNotFound(err) || (err == nil && info.Value == nil):
			create = append(create,
				system.NewCreateAccountWithSeedInstruction(payer, nonceSeed(i), rent, nonceSpace, solana.SystemProgramID, payer, a, payer).Build(),
				system.NewInitializeNonceAccountInstruction(payer, a, solana.SysVarRecentBlockHashesPubkey, solana.SysVarRentPubkey).Build())
		case err != nil:
			return fmt.Errorf("reading nonce account %s: %w", a, err)
		case info.Value.Owner == solana.SystemProgramID && len(info.Value.Data.GetBinary()) == 0:
			// Anyone may send SOL to the address first (it is derived from
			// the treasury's public key): an empty account cannot be
			// created, so it is made a nonce account where it stands.
			create = append(create, system.NewAllocateWithSeedInstruction(payer, nonceSeed(i), nonceSpace, solana.SystemProgramID, a, payer).Build())
			if info.Value.Lamports < rent {
				create = append(create, system.NewTransferInstruction(rent-info.Value.Lamports, payer, a).Build())
			}
			create = append(create, system.NewInitializeNonceAccountInstruction(payer, a, solana.SysVarRecentBlockHashesPubkey, solana.SysVarRentPubkey).Build())
		default:
			if _, err := c.nonce(ctx, a, 0); err != nil {
				return err
			}
		}
	}
	// Eight instructions a transaction keep it well under the size limit.
	for len(create) > 0 {
		n := min(len(create), 8)
		if _, _, err := c.submit(ctx, create[:n], c.treasury); err != nil {
			// Another replica starting at once may have made them: its
			// creation refuses ours.
			if c.noncesReady(ctx) {
				return nil
			}
			return fmt.Errorf("creating nonce accounts: %w", err)
		}
		create = create[n:]
	}
	return nil
}

// noncesReady reports whether every nonce account of the treasury is one.
func (c *Client) noncesReady(ctx context.Context) bool {
	for _, a := range c.nonces {
		if _, err := c.nonce(ctx, a, 0); err != nil {
			return false
		}
	}
	return true
}

// nonce reads account's current nonce, finalized, from a node that has
// seen at least slot after: the nonce of a transaction that landed at
// that slot has advanced there, and a node behind it would hand out the
// spent value, on which a transaction can never land.
func (c *Client) nonce(ctx context.Context, account solana.PublicKey, after uint64) (solana.Hash, error) {
	info, err := c.rpc.GetAccountInfoWithOpts(ctx, account, &rpc.GetAccountInfoOpts{
		Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentFinalized, MinContextSlot: &after,
	})
	if err != nil {
		return solana.Hash{}, fmt.Errorf("reading nonce account %s: %w", account, err)
	}
	// Not every node honours minContextSlot: its answer's own slot is
	// checked too.
	if info.Context.Slot < after {
		return solana.Hash{}, fmt.Errorf("%w: nonce account %s read at slot %d, before %d", ErrBehind, account, info.Context.Slot, after)
	}
	if info.Value == nil || info.Value.Owner != solana.SystemProgramID {
		return solana.Hash{}, fmt.Errorf("%w: %s is not a nonce account", ErrConfig, account)
	}
	var n system.NonceAccount
	if err := n.UnmarshalWithDecoder(bin.NewBinDecoder(info.Value.Data.GetBinary())); err != nil || n.State != 1 {
		return solana.Hash{}, fmt.Errorf("%w: %s is not an initialized nonce account", ErrConfig, account)
	}
	if n.AuthorizedPubkey != c.treasury.PublicKey() {
		return solana.Hash{}, fmt.Errorf("%w: nonce account %s answers to %s, not the treasury", ErrConfig, account, n.AuthorizedPubkey)
	}
	return solana.Hash(n.Nonce), nil
}
