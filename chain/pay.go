package chain

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"github.com/crtx-market/crtx"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"
)

// Pay does what a Solana Pay wallet does with an SPL transfer request: a
// memo instruction, when the request has a memo, immediately before a
// TransferChecked from payer's associated token account to the
// recipient's, the references appended to the transfer's keys in order,
// read-only and not signing. It returns once the transaction is finalized.
// The recipient's token account must exist, as it must for a wallet.
func Pay(ctx context.Context, rpcURL string, payer ed25519.PrivateKey, r crtx.TransferRequest) (string, error) {
	if len(payer) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("%w: the payer is not an Ed25519 private key", ErrConfig)
	}
	cl := rpc.New(rpcURL)
	key := solana.PrivateKey(payer)
	instructions, err := payment(ctx, cl, key.PublicKey(), r, solana.PublicKey{})
	if err != nil {
		return "", err
	}
	sig, _, err := submit(ctx, cl, 500*time.Millisecond, instructions, key)
	if err != nil {
		return "", fmt.Errorf("paying %s: %w", r.URL(), err)
	}
	return sig.String(), nil
}

// PaymentTransaction is the answer to a Solana Pay transaction request:
// the transaction Pay would send for payer, on a recent blockhash with
// payer paying the fee, its signature left empty for payer's wallet.
func (c *Client) PaymentTransaction(ctx context.Context, payer string, r crtx.TransferRequest) ([]byte, error) {
	from, err := solana.PublicKeyFromBase58(payer)
	if err != nil {
		return nil, fmt.Errorf("%w: account %q: %w", ErrAddress, payer, err)
	}
	// The treasury's mint was checked at start: a request costs the RPC
	// provider one call, for the blockhash.
	instructions, err := payment(ctx, c.rpc, from, r, c.mint)
	if err != nil {
		return nil, err
	}
	latest, err := c.rpc.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return nil, fmt.Errorf("reading a recent blockhash: %w", err)
	}
	tx, err := solana.NewTransaction(instructions, latest.Value.Blockhash, solana.TransactionPayer(from))
	if err != nil {
		return nil, fmt.Errorf("building the transaction: %w", err)
	}
	// The wire format holds one signature per required signer: empty ones
	// are what the wallet fills.
	tx.Signatures = make([]solana.Signature, tx.Message.Header.NumRequiredSignatures)
	return tx.MarshalBinary()
}

// payment builds the instructions that pay r from payer's associated
// token account. r's mint is checked on the cluster unless it is checked,
// one known to be USDC's.
func payment(ctx context.Context, cl *rpc.Client, payer solana.PublicKey, r crtx.TransferRequest, checked solana.PublicKey) ([]solana.Instruction, error) {
	if r.SPLToken == "" {
		return nil, fmt.Errorf("%w: a SOL transfer request; only SPL token transfers are paid", crtx.ErrTransferRequest)
	}
	if r.Amount <= 0 {
		return nil, fmt.Errorf("%w: no amount", crtx.ErrTransferRequest)
	}
	recipient, err := solana.PublicKeyFromBase58(r.Recipient)
	if err != nil {
		return nil, fmt.Errorf("%w: recipient %q: %w", ErrAddress, r.Recipient, err)
	}
	mint, err := solana.PublicKeyFromBase58(r.SPLToken)
	if err != nil {
		return nil, fmt.Errorf("%w: spl-token %q: %w", ErrAddress, r.SPLToken, err)
	}
	refs := make([]*solana.AccountMeta, len(r.References))
	for i, s := range r.References {
		ref, err := solana.PublicKeyFromBase58(s)
		if err != nil {
			return nil, fmt.Errorf("%w: reference %q: %w", ErrAddress, s, err)
		}
		refs[i] = solana.Meta(ref)
	}
	// The amount is in USDC's base units; TransferChecked would refuse
	// another mint's decimals, and this says why before any fee is paid.
	if mint != checked {
		if err := checkMint(ctx, cl, mint); err != nil {
			return nil, err
		}
	}
	from, _, err := solana.FindAssociatedTokenAddress(payer, mint)
	if err != nil {
		return nil, fmt.Errorf("%w: the payer's token account: %w", ErrAddress, err)
	}
	to, _, err := solana.FindAssociatedTokenAddress(recipient, mint)
	if err != nil {
		return nil, fmt.Errorf("%w: the recipient's token account: %w", ErrAddress, err)
	}
	transfer := token.NewTransferCheckedInstruction(uint64(r.Amount), Decimals, from, mint, to, payer, nil).Build()
	data, err := transfer.Data()
	if err != nil {
		return nil, fmt.Errorf("encoding the transfer: %w", err)
	}
	var instructions []solana.Instruction
	if r.Memo != "" {
		m, err := memo.NewMemoInstruction([]byte(r.Memo)).ValidateAndBuild()
		if err != nil {
			return nil, fmt.Errorf("%w: memo: %w", crtx.ErrTransferRequest, err)
		}
		instructions = append(instructions, m)
	}
	return append(instructions, solana.NewInstruction(solana.TokenProgramID, append(transfer.Accounts(), refs...), data)), nil
}
