package chain

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	bin "github.com/gagliardetto/binary"
	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// The programs an x402 exact payment may call (scheme_exact_svm.md,
// "Facilitator Verification Rules (MUST)", rule 1).
var (
	computeBudgetProgram = solana.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")
	memoProgram          = solana.MustPublicKeyFromBase58("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
	lighthouseProgram    = solana.MustPublicKeyFromBase58("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95")
)

// Bounds on what a payment makes the fee payer spend. The scheme bounds
// the compute unit price (rule 3: the reference facilitator allows 5
// lamports); crtx also bounds the limit and the priority fee they make
// together, as rule 3 allows ("MAY introduce stricter limits"): a payer
// may not make the treasury pay more than 0.0001 SOL of priority fee.
const (
	maxComputeUnitPrice = 5_000_000 // micro-lamports per compute unit
	maxComputeUnits     = 200_000
	maxPriorityFee      = 100_000 // lamports
	maxMemoBytes        = 256
)

// ComputeBudget's instruction discriminators.
const (
	setComputeUnitLimit = 2
	setComputeUnitPrice = 3
)

// Network is the cluster's CAIP-2 id, as x402 names it: "solana:" and the
// first 32 characters of its genesis hash, read from the cluster once, the
// first time it is asked for; or the id of the cluster it stands in for
// (Config.Network).
func (c *Client) Network(ctx context.Context) (string, error) {
	if c.network != "" {
		return c.network, nil
	}
	if g := c.genesis.Load(); g != nil {
		return "solana:" + (*g)[:min(32, len(*g))], nil
	}
	h, err := c.rpc.GetGenesisHash(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the cluster's genesis hash: %w", err)
	}
	s := h.String()
	c.genesis.Store(&s)
	return "solana:" + s[:min(32, len(s))], nil
}

// FeePayer is the wallet that pays the fee of every x402 payment: the
// treasury, which pays every other transaction's fee too.
func (c *Client) FeePayer() string { return c.treasury.PublicKey().String() }

// CheckPayment reads an x402 payment's partially signed transaction and
// refuses it unless it is exactly what the exact scheme allows, paying t:
// every check of scheme_exact_svm.md's "Facilitator Verification Rules
// (MUST)" that needs no RPC call, and the payer's signature. On success
// the fee payer's signature is added (Signed, Signature). Nothing is read
// from the cluster, so a flood of bogus payments costs no RPC call.
func (c *Client) CheckPayment(transaction string, t crtx.PaymentTerms) (crtx.CheckedPayment, error) {
	raw, err := base64.StdEncoding.DecodeString(transaction)
	if err != nil {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "payload.transaction is not base64")
	}
	return checkPayment(raw, c.treasury, c.mint, c.tokenAccount, t)
}

// refused is a payment the scheme's rules refuse.
func refused(reason, format string, args ...any) error {
	return crtx.PaymentRefused(reason, format, args...)
}

// wire is a transaction as sent: its signatures and the message they sign.
type wire struct {
	sigs    []solana.Signature
	message []byte
	msg     solana.Message
}

// decodeWire splits raw into its signatures and message and decodes the
// message, refusing trailing bytes.
func decodeWire(raw []byte) (wire, error) {
	var w wire
	n, size, err := shortVec(raw)
	if err != nil || n == 0 || n > 2 || len(raw) < size+64*n {
		return w, errors.New("malformed signatures")
	}
	for i := range n {
		w.sigs = append(w.sigs, solana.SignatureFromBytes(raw[size+64*i:size+64*(i+1)]))
	}
	w.message = raw[size+64*n:]
	d := bin.NewBinDecoder(w.message)
	if err := w.msg.UnmarshalWithDecoder(d); err != nil {
		return w, fmt.Errorf("malformed message: %w", err)
	}
	if d.Remaining() != 0 {
		return w, errors.New("bytes after the message")
	}
	return w, nil
}

// shortVec reads Solana's compact-u16 length prefix.
func shortVec(b []byte) (n, size int, err error) {
	for size < 3 {
		if size >= len(b) {
			return 0, 0, errors.New("short length")
		}
		v := b[size]
		n |= int(v&0x7f) << (7 * size)
		size++
		if v&0x80 == 0 {
			return n, size, nil
		}
	}
	return 0, 0, errors.New("length too long")
}

// checkPayment is CheckPayment on decoded keys, so that it can be fuzzed
// and tested without a cluster.
func checkPayment(raw []byte, feePayer solana.PrivateKey, mint, destination solana.PublicKey, t crtx.PaymentTerms) (crtx.CheckedPayment, error) {
	w, err := decodeWire(raw)
	if err != nil {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "the transaction could not be decoded: %v", err)
	}
	m := &w.msg
	payer := feePayer.PublicKey()
	keys := m.AccountKeys
	// Two signers, the fee payer first: the payer signs its transfer, and
	// the fee payer's signature is the one crtx adds.
	switch {
	case len(m.AddressTableLookups) > 0:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "address lookup tables are not accepted")
	case len(keys) == 0 || keys[0] != payer:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_missing_fee_payer", "the fee payer must be %s (extra.feePayer)", payer)
	}
	ixs := m.Instructions
	if len(ixs) < 3 || len(ixs) > 6 {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_instructions_length", "the transaction has %d instructions; the exact scheme allows 3 to 6", len(ixs))
	}
	program := func(ix solana.CompiledInstruction) (solana.PublicKey, bool) {
		if int(ix.ProgramIDIndex) >= len(keys) {
			return solana.PublicKey{}, false
		}
		return keys[ix.ProgramIDIndex], true
	}
	accounts := func(ix solana.CompiledInstruction) ([]solana.PublicKey, bool) {
		out := make([]solana.PublicKey, 0, len(ix.Accounts))
		for _, a := range ix.Accounts {
			if int(a) >= len(keys) {
				return nil, false
			}
			out = append(out, keys[a])
		}
		return out, true
	}
	// Rule 2: the fee payer is in no instruction's accounts.
	for i, ix := range ixs {
		acc, ok := accounts(ix)
		p, pok := program(ix)
		if !ok || !pok {
			return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "instruction %d names an account the transaction lacks", i+1)
		}
		if p == payer {
			return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts", "instruction %d calls the fee payer", i+1)
		}
		for _, a := range acc {
			if a == payer {
				return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts", "the fee payer is an account of instruction %d", i+1)
			}
		}
	}
	if int(m.Header.NumRequiredSignatures) != len(w.sigs) || len(w.sigs) != 2 || len(keys) < 2 {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "the transaction must have two signers: the fee payer and the payer")
	}
	// Rules 1 and 3: the compute budget, limit then price, and bounded.
	units, err := computeBudget(ixs[0], program, setComputeUnitLimit, 5)
	if err != nil {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction", "instruction 1 must set the compute unit limit: %v", err)
	}
	price, err := computeBudget(ixs[1], program, setComputeUnitPrice, 9)
	if err != nil {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_instructions_compute_price_instruction", "instruction 2 must set the compute unit price: %v", err)
	}
	if price > maxComputeUnitPrice || units > maxComputeUnits || price*units/1_000_000 > maxPriorityFee {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high",
			"a compute unit price of %d micro-lamports over %d units is more than the fee payer pays: at most %d micro-lamports, %d units and %d lamports of priority fee",
			price, units, maxComputeUnitPrice, maxComputeUnits, maxPriorityFee)
	}
	// Rules 4 and 6: a TransferChecked of the mint, the exact amount, into
	// the payTo's associated token account.
	tp, _ := program(ixs[2])
	acc, _ := accounts(ixs[2])
	data := ixs[2].Data
	if tp != solana.TokenProgramID || len(data) != 10 || data[0] != transferChecked || len(acc) != 4 {
		// The mint is an SPL Token mint (checkMint), so Token-2022 could
		// not move it. Multisig signers (accounts past the fourth) are
		// refused: they could name a deposit's reference.
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_no_transfer_instruction", "instruction 3 must be an SPL Token TransferChecked with four accounts")
	}
	source, gotMint, dest, authority := acc[0], acc[1], acc[2], acc[3]
	amount := binary.LittleEndian.Uint64(data[1:9])
	switch {
	case authority == payer || source == payer:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_fee_payer_transferring_funds", "the fee payer may not pay")
	case gotMint != mint:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_mint_mismatch", "the transfer moves %s, not the asset %s", gotMint, mint)
	case data[9] != Decimals:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_mint_mismatch", "the transfer names %d decimals; the asset has %d", data[9], Decimals)
	case dest != destination:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_recipient_mismatch", "the transfer pays %s, not payTo's token account %s", dest, destination)
	case t.Amount <= 0 || amount != uint64(t.Amount):
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_amount_mismatch", "the transfer pays %d base units; the call costs %d", amount, int64(t.Amount))
	case keys[1] != authority:
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "the second signer must be the transfer's authority")
	}
	// The source is the authority's own associated token account, as the
	// scheme's clients build it: a refund goes back to it, never to a
	// delegate's.
	if own, _, err := solana.FindAssociatedTokenAddress(authority, mint); err != nil || own != source {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_transaction_could_not_be_decoded", "the transfer must debit the payer's own associated token account")
	}
	// Rule 1's optional instructions: Lighthouse or Memo, and a memo
	// present (the client MUST add one: it makes equal payments distinct).
	memos := 0
	for i, ix := range ixs[3:] {
		p, _ := program(ix)
		switch p {
		case memoProgram:
			memos++
			if len(ix.Data) > maxMemoBytes || !utf8.Valid(ix.Data) {
				return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_memo_mismatch", "the memo must be UTF-8, at most %d bytes", maxMemoBytes)
			}
		case lighthouseProgram:
			if i == 2 {
				// Rule 1: the sixth instruction, when there is one, is a memo.
				return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_unknown_sixth_instruction", "instruction 6 must be a memo")
			}
		default:
			return crtx.CheckedPayment{}, refused([]string{"invalid_exact_svm_payload_unknown_fourth_instruction",
				"invalid_exact_svm_payload_unknown_fifth_instruction", "invalid_exact_svm_payload_unknown_sixth_instruction"}[i],
				"instruction %d calls %s: only Lighthouse and Memo may follow the transfer", i+4, p)
		}
	}
	if memos != 1 {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_memo_count", "the transaction must carry one memo, not %d", memos)
	}
	// The payer's signature, checked here rather than by a simulation.
	if !ed25519.Verify(ed25519.PublicKey(authority[:]), w.message, w.sigs[1][:]) {
		return crtx.CheckedPayment{}, refused("invalid_exact_svm_payload_signature", "the payer's signature does not verify")
	}
	known := map[solana.PublicKey]bool{payer: true, authority: true, source: true, dest: true, mint: true,
		solana.TokenProgramID: true, computeBudgetProgram: true, memoProgram: true, lighthouseProgram: true}
	p := crtx.CheckedPayment{Payer: authority.String(), Source: source.String(), Amount: t.Amount, Raw: raw}
	for _, k := range keys {
		if !known[k] {
			p.Keys = append(p.Keys, k.String())
		}
	}
	// The fee payer signs last: its signature names the transaction.
	sig := ed25519.Sign(ed25519.PrivateKey(feePayer), w.message)
	_, size, _ := shortVec(raw)
	signed := append([]byte(nil), raw...)
	copy(signed[size:size+64], sig)
	p.Signature, p.Signed = solana.SignatureFromBytes(sig).String(), signed
	return p, nil
}

// computeBudget reads a ComputeBudget instruction with discriminator d and
// size bytes of data, and returns its little-endian value.
func computeBudget(ix solana.CompiledInstruction, program func(solana.CompiledInstruction) (solana.PublicKey, bool), d byte, size int) (uint64, error) {
	if p, _ := program(ix); p != computeBudgetProgram {
		return 0, fmt.Errorf("it calls %s", p)
	}
	if len(ix.Data) != size || ix.Data[0] != d {
		return 0, errors.New("wrong instruction data")
	}
	if size == 5 {
		return uint64(binary.LittleEndian.Uint32(ix.Data[1:])), nil
	}
	return binary.LittleEndian.Uint64(ix.Data[1:]), nil
}

// SimulatePayment simulates a checked payment's signed transaction, its
// signatures verified and its blockhash its own, reads what its source
// holds after it (Left), and bounds when it can land: no later than the
// newest blockhash read after the simulation.
// The simulation is what shows the payer's account exists and holds the
// amount (rule 5).
func (c *Client) SimulatePayment(ctx context.Context, p *crtx.CheckedPayment) error {
	tx, err := solana.TransactionFromBytes(p.Signed)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSigned, err)
	}
	source, err := solana.PublicKeyFromBase58(p.Source)
	if err != nil {
		return fmt.Errorf("%w: source %q", ErrAddress, p.Source)
	}
	out, err := c.rpc.SimulateTransactionWithOpts(ctx, tx, &rpc.SimulateTransactionOpts{SigVerify: true, Commitment: rpc.CommitmentConfirmed,
		Accounts: &rpc.SimulateTransactionAccountsOpts{Encoding: solana.EncodingBase64, Addresses: []solana.PublicKey{source}}})
	if err != nil {
		return fmt.Errorf("simulating the payment: %w", err)
	}
	if out.Value.Err != nil {
		return c.whyNotPaid(ctx, p, source, out.Value.Err)
	}
	// What the source holds after it: the payments in flight from the
	// same account, each simulated alone, must fit in it too.
	if len(out.Value.Accounts) == 1 && out.Value.Accounts[0] != nil {
		if data := out.Value.Accounts[0].Data.GetBinary(); len(data) >= 72 {
			p.Left = crtx.USDC(binary.LittleEndian.Uint64(data[64:72]))
		}
	}
	// Its blockhash was valid at the simulation, so it expires no later
	// than any blockhash made since.
	latest, err := c.rpc.GetLatestBlockhash(ctx, rpc.CommitmentProcessed)
	if err != nil {
		return fmt.Errorf("reading a recent blockhash: %w", err)
	}
	p.LastValid = latest.Value.LastValidBlockHeight
	c.clock.observe(time.Now(), p.LastValid-crtx.BlockhashBlocks)
	return nil
}

// whyNotPaid says in words why a payment's simulation failed when the
// payer's token account is missing or holds too little (x402's
// insufficient_funds), reading it once; any other failure is the chain's.
func (c *Client) whyNotPaid(ctx context.Context, p *crtx.CheckedPayment, source solana.PublicKey, failure any) error {
	info, err := c.rpc.GetAccountInfoWithOpts(ctx, source, &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentConfirmed})
	switch {
	case isNotFound(err) || (err == nil && (info == nil || info.Value == nil)):
		return refused("insufficient_funds", "the payer %s has no USDC token account (%s) on this chain, so it holds no USDC to pay with", p.Payer, p.Source)
	case err == nil && len(info.Value.Data.GetBinary()) >= 72:
		if held := crtx.USDC(binary.LittleEndian.Uint64(info.Value.Data.GetBinary()[64:72])); held < p.Amount {
			return refused("insufficient_funds", "the payer %s holds %s USDC in its token account %s, less than the %s USDC of this call", p.Payer, held, p.Source, p.Amount)
		}
	}
	return refused("transaction_simulation_failed", "the payment would fail on the chain: %v", failure)
}

// settlePoll is how often a payment being settled is looked up: its payer
// waits on it for its result, where a withdrawal's owner waits for
// nothing (two RPC calls a look).
const settlePoll = 100 * time.Millisecond

// settleRetry is how long a settlement keeps asking a node that does not
// answer before it gives up for now (the execution waits, leased, and is
// settled later).
const settleRetry = 10 * time.Second

// SettlePayment sends a payment's signed bytes until they land confirmed,
// fail, or can never land (ErrExpired: the finalized height passed
// lastValid without them); sending them again is harmless. It returns the
// slot they landed in.
func (c *Client) SettlePayment(ctx context.Context, raw []byte, lastValid uint64) (uint64, error) {
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil || len(tx.Signatures) == 0 {
		return 0, fmt.Errorf("%w: %w", ErrNotSigned, err)
	}
	// A refusal proves nothing (Send): the status says what became of it.
	// A read the node did not answer is tried again, for a while: the
	// payer waits on the answer.
	poll := min(c.poll, settlePoll)
	for start := time.Now(); ; {
		_ = c.Send(ctx, raw)
		slot, err := await(ctx, c.rpc, poll, signed{sig: tx.Signatures[0], raw: raw, lastValid: lastValid}, rpc.ConfirmationStatusConfirmed)
		switch {
		case errors.Is(err, ErrExpired) || errors.Is(err, ErrFailed):
			return slot, fmt.Errorf("%w: %w", crtx.ErrPaymentNeverLands, err)
		case err == nil || ctx.Err() != nil || time.Since(start) > settleRetry:
			return slot, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(poll):
		}
	}
}
