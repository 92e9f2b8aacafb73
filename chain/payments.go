package chain

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// transferChecked is the SPL Token instruction's index.
const transferChecked = 12

// Payments reads every transaction that names reference, through every
// page of its signatures: a reference is public once its URL is shown, and
// a stranger's transfers carrying it must not push the real payment out of
// the first page. Only transfers into the treasury's token account count.
func (c *Client) Payments(ctx context.Context, reference string) ([]crtx.ChainPayment, error) {
	ref, err := solana.PublicKeyFromBase58(reference)
	if err != nil {
		return nil, fmt.Errorf("%w: reference %q: %w", ErrAddress, reference, err)
	}
	var pays []crtx.ChainPayment
	err = c.signatures(ctx, ref, func(sig solana.Signature) (bool, error) {
		p, ok, err := c.payment(ctx, sig, &ref)
		if ok {
			pays = append(pays, p)
		}
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("payments of reference %s: %w", reference, err)
	}
	return c.markFinalized(ctx, pays)
}

// Incoming lists the newest transfers into the treasury's token account,
// at most limit, each with every account key its transaction names.
func (c *Client) Incoming(ctx context.Context, limit int) ([]crtx.ChainPayment, error) {
	if limit <= 0 {
		return nil, nil
	}
	var pays []crtx.ChainPayment
	err := c.signatures(ctx, c.tokenAccount, func(sig solana.Signature) (bool, error) {
		p, ok, err := c.payment(ctx, sig, nil)
		if ok {
			pays = append(pays, p)
		}
		return len(pays) < limit, err
	})
	if err != nil {
		return nil, fmt.Errorf("incoming transfers: %w", err)
	}
	return c.markFinalized(ctx, pays)
}

// signatures hands each successful transaction naming address to each,
// newest first, page after page, until each says no more or the history
// ends.
func (c *Client) signatures(ctx context.Context, address solana.PublicKey, each func(solana.Signature) (bool, error)) error {
	seen := make(map[solana.Signature]bool)
	var before solana.Signature
	for {
		limit := c.pageSize
		page, err := c.rpc.GetSignaturesForAddressWithOpts(ctx, address, &rpc.GetSignaturesForAddressOpts{
			Limit:      &limit,
			Before:     before,
			Commitment: rpc.CommitmentConfirmed,
		})
		if err != nil {
			return fmt.Errorf("reading the signatures of %s: %w", address, err)
		}
		fresh := false
		for _, s := range page {
			if seen[s.Signature] {
				continue
			}
			seen[s.Signature] = true
			fresh = true
			if s.Err != nil {
				continue
			}
			more, err := each(s.Signature)
			if err != nil || !more {
				return err
			}
		}
		// A page with nothing new ends the history even on a server that
		// ignores before.
		if len(page) < limit || !fresh {
			return nil
		}
		before = page[len(page)-1].Signature
	}
}

// payment reads one transaction and reports whether it pays the treasury:
// it succeeded, it names reference (when given), one of its instructions is
// a TransferChecked of the mint into the treasury's token account, and that
// account's balance of the mint grew. The amount is the growth, what the
// transaction moved in whatever way, not what an instruction claims.
func (c *Client) payment(ctx context.Context, sig solana.Signature, reference *solana.PublicKey) (crtx.ChainPayment, bool, error) {
	version := uint64(0)
	out, err := c.rpc.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding:                       solana.EncodingBase64,
		Commitment:                     rpc.CommitmentConfirmed,
		MaxSupportedTransactionVersion: &version,
	})
	if isNotFound(err) {
		// Listed and not yet served: the next read finds it.
		return crtx.ChainPayment{}, false, nil
	}
	if err != nil {
		return crtx.ChainPayment{}, false, fmt.Errorf("reading transaction %s: %w", sig, err)
	}
	if out.Meta == nil || out.Meta.Err != nil || out.Transaction == nil {
		return crtx.ChainPayment{}, false, nil
	}
	tx, err := out.Transaction.GetTransaction()
	if err != nil || tx == nil {
		return crtx.ChainPayment{}, false, nil
	}
	// The keys instructions index: the message's own, then those loaded
	// from lookup tables, writable first.
	keys := make([]solana.PublicKey, 0, len(tx.Message.AccountKeys)+len(out.Meta.LoadedAddresses.Writable)+len(out.Meta.LoadedAddresses.ReadOnly))
	keys = append(keys, tx.Message.AccountKeys...)
	keys = append(keys, out.Meta.LoadedAddresses.Writable...)
	keys = append(keys, out.Meta.LoadedAddresses.ReadOnly...)
	key := func(i uint16) (solana.PublicKey, bool) {
		if int(i) >= len(keys) {
			return solana.PublicKey{}, false
		}
		return keys[i], true
	}
	if reference != nil && !solana.PublicKeySlice(keys).Has(*reference) {
		return crtx.ChainPayment{}, false, nil
	}
	var from solana.PublicKey
	found := false
	for _, in := range tx.Message.Instructions {
		program, _ := key(in.ProgramIDIndex)
		if program != solana.TokenProgramID || len(in.Data) != 10 || in.Data[0] != transferChecked || len(in.Accounts) < 4 {
			continue
		}
		mint, _ := key(in.Accounts[1])
		dest, _ := key(in.Accounts[2])
		owner, ok := key(in.Accounts[3])
		if ok && mint == c.mint && dest == c.tokenAccount && binary.LittleEndian.Uint64(in.Data[1:9]) > 0 {
			from, found = owner, true
			break
		}
	}
	if !found {
		return crtx.ChainPayment{}, false, nil
	}
	pre, err := c.tokenBalance(keys, out.Meta.PreTokenBalances)
	if err != nil {
		return crtx.ChainPayment{}, false, fmt.Errorf("transaction %s: %w", sig, err)
	}
	post, err := c.tokenBalance(keys, out.Meta.PostTokenBalances)
	if err != nil {
		return crtx.ChainPayment{}, false, fmt.Errorf("transaction %s: %w", sig, err)
	}
	if post <= pre {
		return crtx.ChainPayment{}, false, nil
	}
	p := crtx.ChainPayment{
		Signature: sig.String(),
		Slot:      out.Slot,
		Amount:    crtx.USDC(post - pre),
		From:      from.String(),
	}
	if reference == nil {
		p.References = make([]string, len(keys))
		for i, k := range keys {
			p.References[i] = k.String()
		}
	}
	return p, true, nil
}

// tokenBalance is the treasury's token account's balance of the mint in
// one of a transaction's token balance lists; absent, the account did not
// exist yet and held nothing.
func (c *Client) tokenBalance(keys []solana.PublicKey, balances []rpc.TokenBalance) (int64, error) {
	for _, b := range balances {
		if int(b.AccountIndex) >= len(keys) || keys[b.AccountIndex] != c.tokenAccount || b.Mint != c.mint || b.UiTokenAmount == nil {
			continue
		}
		n, err := strconv.ParseInt(b.UiTokenAmount.Amount, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("token balance %q: %w", b.UiTokenAmount.Amount, err)
		}
		return n, nil
	}
	return 0, nil
}

// markFinalized sets each payment's Finalized from its signature's status.
func (c *Client) markFinalized(ctx context.Context, pays []crtx.ChainPayment) ([]crtx.ChainPayment, error) {
	if len(pays) == 0 {
		return pays, nil
	}
	sigs := make([]solana.Signature, len(pays))
	for i, p := range pays {
		sigs[i] = solana.MustSignatureFromBase58(p.Signature)
	}
	done, err := finalized(ctx, c.rpc, sigs)
	if err != nil {
		return nil, err
	}
	for i := range pays {
		pays[i].Finalized = done[sigs[i]]
	}
	return pays, nil
}
