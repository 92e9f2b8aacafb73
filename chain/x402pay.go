package chain

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx/x402"
)

// NetworkOf is the CAIP-2 id of the cluster rpcURL serves, as x402 names
// it: what a payer matches against a PaymentRequired's accepts.
func NetworkOf(ctx context.Context, rpcURL string) (string, error) {
	h, err := rpc.New(rpcURL).GetGenesisHash(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the cluster's genesis hash: %w", err)
	}
	return "solana:" + h.String()[:32], nil
}

// X402Payment builds and signs as payer, for its wallet's associated token
// account, the transaction of an x402 exact payment of req, as the
// scheme's official client does (scheme_exact_svm.md): a compute unit
// limit and price, the TransferChecked of req's amount to payTo's
// associated token account, and a memo of a random nonce; the fee payer
// (req.extra.feePayer) signs it after. It returns payload.transaction.
func X402Payment(ctx context.Context, rpcURL string, payer ed25519.PrivateKey, req x402.PaymentRequirements) (string, error) {
	if len(payer) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("%w: the payer is not an Ed25519 private key", ErrConfig)
	}
	amount, err := strconv.ParseUint(req.Amount, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: amount %q", ErrAmount, req.Amount)
	}
	mint, err1 := solana.PublicKeyFromBase58(req.Asset)
	payTo, err2 := solana.PublicKeyFromBase58(req.PayTo)
	feePayer, err3 := solana.PublicKeyFromBase58(req.Extra.FeePayer)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", fmt.Errorf("%w: the requirements' asset, payTo or feePayer", ErrAddress)
	}
	key := solana.PrivateKey(payer)
	owner := key.PublicKey()
	source, _, err := solana.FindAssociatedTokenAddress(owner, mint)
	if err != nil {
		return "", err
	}
	dest, _, err := solana.FindAssociatedTokenAddress(payTo, mint)
	if err != nil {
		return "", err
	}
	cl := rpc.New(rpcURL)
	latest, err := cl.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return "", fmt.Errorf("reading a recent blockhash: %w", err)
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	budget := func(d byte, v uint64, size int) solana.Instruction {
		data := make([]byte, 9)
		data[0] = d
		binary.LittleEndian.PutUint64(data[1:], v)
		return solana.NewInstruction(computeBudgetProgram, nil, data[:1+size])
	}
	tx, err := solana.NewTransaction([]solana.Instruction{
		budget(setComputeUnitLimit, 20_000, 4),
		budget(setComputeUnitPrice, 1, 8),
		token.NewTransferCheckedInstruction(amount, Decimals, source, mint, dest, owner, nil).Build(),
		solana.NewInstruction(memoProgram, nil, []byte(hex.EncodeToString(nonce))),
	}, latest.Value.Blockhash, solana.TransactionPayer(feePayer))
	if err != nil {
		return "", fmt.Errorf("building the transaction: %w", err)
	}
	if _, err := tx.PartialSign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == owner {
			return &key
		}
		return nil
	}); err != nil {
		return "", fmt.Errorf("signing the transaction: %w", err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}
