package chain

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// Payments reads the transactions that name reference after until (a
// signature; empty, from the first), oldest first, and returns those that
// pay the treasury. A reference is public once its URL is shown, and
// anyone may name it in transactions of their own, so each signature is
// examined once: the scan's Until is where the next one starts, past every
// signature decided (failed, not a payment of reference, or a finalized
// payment, which the caller credits); a transaction read for one reference
// is not fetched again for another; and at most budget transactions are
// fetched, the rest left for the next scan.
func (c *Client) Payments(ctx context.Context, reference, until string, budget int) (crtx.PaymentScan, error) {
	scan := crtx.PaymentScan{Until: until}
	ref, err := solana.PublicKeyFromBase58(reference)
	if err != nil {
		return scan, fmt.Errorf("%w: reference %q: %w", ErrAddress, reference, err)
	}
	var from solana.Signature
	if until != "" {
		if from, err = solana.SignatureFromBase58(until); err != nil {
			return scan, fmt.Errorf("%w: signature %q: %w", ErrAddress, until, err)
		}
	}
	var listed []*rpc.TransactionSignature
	// Finalized: a signature the scan passes is never dropped with a fork.
	complete, err := c.signatures(ctx, ref, from, rpc.CommitmentFinalized, func(s *rpc.TransactionSignature) (bool, error) {
		listed = append(listed, s)
		return true, nil
	})
	if err != nil {
		return scan, fmt.Errorf("payments of reference %s: %w", reference, err)
	}
	// Oldest first: Until moves on while every signature before it is decided.
	slices.Reverse(listed)
	type entry struct {
		sig      solana.Signature
		decided  bool
		payments []int // indexes in scan.Payments
	}
	var entries []entry
	for _, s := range listed {
		e := entry{sig: s.Signature}
		if s.Err != nil {
			e.decided = true
			entries = append(entries, e)
			continue
		}
		tx, ok := c.seen.get(s.Signature)
		if !ok {
			if scan.Fetched >= budget {
				break
			}
			scan.Fetched++
			var found bool
			if tx, found, err = c.read(ctx, s.Signature); err != nil {
				return scan, fmt.Errorf("payments of reference %s: %w", reference, err)
			}
			if !found {
				// Listed and not yet served: the next scan reads it.
				entries = append(entries, e)
				continue
			}
			c.seen.put(s.Signature, tx)
		}
		pays := tx.paying(ref)
		for _, p := range pays {
			e.payments = append(e.payments, len(scan.Payments))
			scan.Payments = append(scan.Payments, p)
		}
		e.decided = len(pays) == 0
		entries = append(entries, e)
	}
	if scan.Payments, err = c.markFinalized(ctx, scan.Payments); err != nil {
		return scan, err
	}
	// A listing that did not reach until (a server that ignores before,
	// or caps the page) left a gap below what it listed: Until stays.
	for _, e := range entries {
		if !complete || (!e.decided && (len(e.payments) == 0 || !scan.Payments[e.payments[0]].Finalized)) {
			break
		}
		scan.Until = e.sig.String()
	}
	return scan, nil
}

// Incoming lists the newest transfers into the treasury's token account,
// at most limit, each with every account key its transaction names.
func (c *Client) Incoming(ctx context.Context, limit int) ([]crtx.ChainPayment, error) {
	if limit <= 0 {
		return nil, nil
	}
	var pays []crtx.ChainPayment
	_, err := c.signatures(ctx, c.tokenAccount, solana.Signature{}, rpc.CommitmentConfirmed, func(s *rpc.TransactionSignature) (bool, error) {
		if s.Err != nil {
			return true, nil
		}
		tx, found, err := c.examine(ctx, s)
		if err != nil || !found {
			return true, err
		}
		pays = append(pays, tx.paying(solana.PublicKey{})...)
		return len(pays) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("incoming transfers: %w", err)
	}
	return c.markFinalized(ctx, pays)
}

// Recent reads the newest transactions naming reference, at most limit,
// confirmed or finalized, and returns the payments among them: what a
// wallet sent and the chain has not finalized yet is among them, which a
// second request to pay must not ask for again.
func (c *Client) Recent(ctx context.Context, reference string, limit int) ([]crtx.ChainPayment, error) {
	ref, err := solana.PublicKeyFromBase58(reference)
	if err != nil {
		return nil, fmt.Errorf("%w: reference %q: %w", ErrAddress, reference, err)
	}
	var pays []crtx.ChainPayment
	n := 0
	_, err = c.signatures(ctx, ref, solana.Signature{}, rpc.CommitmentConfirmed, func(s *rpc.TransactionSignature) (bool, error) {
		n++
		if s.Err != nil {
			return n < limit, nil
		}
		tx, found, err := c.examine(ctx, s)
		if err != nil || !found {
			return n < limit, err
		}
		pays = append(pays, tx.paying(ref)...)
		return n < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("recent payments of reference %s: %w", reference, err)
	}
	return c.markFinalized(ctx, pays)
}

// examine is what a transaction listed by a confirmed read holds, fetched
// unless remembered. Only one listed finalized is remembered: a confirmed
// one may yet be dropped with its fork, and Payments credits what it
// remembers. A flood of requests (Recent answers the public Solana Pay
// endpoint) thus fetches only what the chain has not finalized yet.
func (c *Client) examine(ctx context.Context, s *rpc.TransactionSignature) (examined, bool, error) {
	if tx, ok := c.seen.get(s.Signature); ok {
		return tx, true, nil
	}
	tx, found, err := c.read(ctx, s.Signature)
	if found && err == nil && s.ConfirmationStatus == rpc.ConfirmationStatusFinalized {
		c.seen.put(s.Signature, tx)
	}
	return tx, found, err
}

// signatures hands each signature naming address after until (zero: from
// the first), at commitment, to each, newest first, page after page, until each says no
// more or the history ends. It reports whether it listed every signature
// down to until: a short page, or until itself, ends the list; a page
// with nothing new (a server that ignores before) does not.
func (c *Client) signatures(ctx context.Context, address solana.PublicKey, until solana.Signature, commitment rpc.CommitmentType, each func(*rpc.TransactionSignature) (bool, error)) (bool, error) {
	seen := make(map[solana.Signature]bool)
	var before solana.Signature
	for {
		limit := c.pageSize
		page, err := c.rpc.GetSignaturesForAddressWithOpts(ctx, address, &rpc.GetSignaturesForAddressOpts{
			Limit:      &limit,
			Before:     before,
			Until:      until,
			Commitment: commitment,
		})
		if err != nil {
			return false, fmt.Errorf("reading the signatures of %s: %w", address, err)
		}
		fresh := false
		for _, s := range page {
			// A server that ignores until lists it, and what is older.
			if !until.IsZero() && s.Signature == until {
				return true, nil
			}
			if seen[s.Signature] {
				continue
			}
			seen[s.Signature] = true
			fresh = true
			more, err := each(s)
			if err != nil || !more {
				return false, err
			}
		}
		switch {
		case len(page) < limit:
			return true, nil
		case !fresh:
			return false, nil
		}
		before = page[len(page)-1].Signature
	}
}

// examined is what the watcher needs of one transaction: the payments it
// made into the treasury's token account. It does not change once the
// transaction landed; whether it is finalized is read apart.
type examined struct {
	payments []crtx.ChainPayment
}

// paying is the transaction's payments that name ref (every one, for the
// zero key).
func (e examined) paying(ref solana.PublicKey) []crtx.ChainPayment {
	var out []crtx.ChainPayment
	for _, p := range e.payments {
		if ref.IsZero() || slices.Contains(p.References, ref.String()) {
			out = append(out, p)
		}
	}
	return out
}

// The SPL Token instructions that move tokens, by their index.
const (
	transfer        = 3
	transferChecked = 12
)

// inflow is one SPL Token transfer into the treasury's token account, top
// level or inner (by a program).
type inflow struct {
	amount uint64
	owner  solana.PublicKey
	// refs are the instruction's accounts past the transfer's own that
	// sign nothing: where Solana Pay puts a reference.
	refs []string
}

// read fetches one transaction and examines what it paid into the
// treasury's token account, whatever moved it: a Transfer or a
// TransferChecked, at the top or inner (a program's). It reports false
// when the node does not serve the transaction (yet).
//
// The money is what the account's balance of the mint grew by. When each
// transfer into it names references of its own (Solana Pay's placement)
// and the instructions add up to the growth, each is a payment of its own
// (Part 1, 2, …), so one transaction paying two deposits pays each its
// part. Otherwise the growth is one payment (Part 0) with every key of the
// transaction as its possible references; the watcher credits it only to
// a sole deposit among them, and the operator sees the rest.
func (c *Client) read(ctx context.Context, sig solana.Signature) (examined, bool, error) {
	version := uint64(0)
	out, err := c.rpc.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding:                       solana.EncodingBase64,
		Commitment:                     rpc.CommitmentConfirmed,
		MaxSupportedTransactionVersion: &version,
	})
	if isNotFound(err) {
		return examined{}, false, nil
	}
	if err != nil {
		return examined{}, false, fmt.Errorf("reading transaction %s: %w", sig, err)
	}
	if out.Meta == nil || out.Meta.Err != nil || out.Transaction == nil {
		return examined{}, true, nil
	}
	tx, err := out.Transaction.GetTransaction()
	if err != nil || tx == nil {
		return examined{}, true, nil
	}
	// The keys instructions index: the message's own, then those loaded
	// from lookup tables, writable first.
	keys := make([]solana.PublicKey, 0, len(tx.Message.AccountKeys)+len(out.Meta.LoadedAddresses.Writable)+len(out.Meta.LoadedAddresses.ReadOnly))
	keys = append(keys, tx.Message.AccountKeys...)
	keys = append(keys, out.Meta.LoadedAddresses.Writable...)
	keys = append(keys, out.Meta.LoadedAddresses.ReadOnly...)
	signers := int(tx.Message.Header.NumRequiredSignatures)
	pre, err := c.tokenBalance(keys, out.Meta.PreTokenBalances)
	if err != nil {
		return examined{}, false, fmt.Errorf("transaction %s: %w", sig, err)
	}
	post, err := c.tokenBalance(keys, out.Meta.PostTokenBalances)
	if err != nil {
		return examined{}, false, fmt.Errorf("transaction %s: %w", sig, err)
	}
	if post <= pre {
		return examined{}, true, nil
	}
	var flows []inflow
	top := true
	look := func(program uint16, accounts []uint16, data []byte, atTop bool) {
		if f, ok := c.inflow(keys, signers, program, accounts, data); ok {
			flows = append(flows, f)
			top = top && atTop
		}
	}
	for _, in := range tx.Message.Instructions {
		look(in.ProgramIDIndex, in.Accounts, in.Data, true)
	}
	for _, inner := range out.Meta.InnerInstructions {
		for _, in := range inner.Instructions {
			look(in.ProgramIDIndex, in.Accounts, in.Data, false)
		}
	}
	var sum uint64
	own := top
	for _, f := range flows {
		sum += f.amount
		own = own && len(f.refs) > 0
	}
	growth := uint64(post - pre)
	var e examined
	if len(flows) > 0 && own && sum == growth {
		for i, f := range flows {
			e.payments = append(e.payments, crtx.ChainPayment{Signature: sig.String(), Part: i + 1, Slot: out.Slot,
				Amount: crtx.USDC(f.amount), From: f.owner.String(), References: f.refs})
		}
		return e, true, nil
	}
	p := crtx.ChainPayment{Signature: sig.String(), Slot: out.Slot, Amount: crtx.USDC(growth), References: make([]string, len(keys))}
	if len(flows) > 0 {
		p.From = flows[0].owner.String()
	}
	for i, k := range keys {
		p.References[i] = k.String()
	}
	e.payments = append(e.payments, p)
	return e, true, nil
}

// inflow reads one instruction as an SPL Token Transfer or TransferChecked
// into the treasury's token account.
func (c *Client) inflow(keys []solana.PublicKey, signers int, program uint16, accounts []uint16, data []byte) (inflow, bool) {
	key := func(i uint16) (solana.PublicKey, bool) {
		if int(i) >= len(keys) {
			return solana.PublicKey{}, false
		}
		return keys[i], true
	}
	if p, _ := key(program); p != solana.TokenProgramID || len(data) < 9 {
		return inflow{}, false
	}
	var dest, owner solana.PublicKey
	var own []uint16
	switch {
	case data[0] == transfer && len(data) == 9 && len(accounts) >= 3:
		dest, _ = key(accounts[1])
		owner, _ = key(accounts[2])
		own = accounts[3:]
	case data[0] == transferChecked && len(data) == 10 && len(accounts) >= 4:
		if mint, _ := key(accounts[1]); mint != c.mint {
			return inflow{}, false
		}
		dest, _ = key(accounts[2])
		owner, _ = key(accounts[3])
		own = accounts[4:]
	default:
		return inflow{}, false
	}
	amount := binary.LittleEndian.Uint64(data[1:9])
	if dest != c.tokenAccount || amount == 0 {
		return inflow{}, false
	}
	f := inflow{amount: amount, owner: owner}
	for _, i := range own {
		if k, ok := key(i); ok && int(i) >= signers {
			f.refs = append(f.refs, k.String())
		}
	}
	return f, true
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
