package chaintest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"
)

// Programs an x402 exact payment calls besides SPL Token.
var (
	ComputeBudgetProgram = solana.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")
	MemoProgram          = solana.MustPublicKeyFromBase58("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
)

// Payment is an x402 exact payment as the official client builds it: a
// compute unit limit, a compute unit price, a TransferChecked of Amount
// from Payer's token account to PayTo's, and a memo of a random nonce. A
// test changes Instructions to break one rule at a time.
type Payment struct {
	FeePayer     string
	Payer        ed25519.PrivateKey
	Mint, PayTo  string
	Amount       uint64
	Instructions []solana.Instruction
}

// NewPayment is the payment the official client would build.
func NewPayment(t testing.TB, feePayer string, payer ed25519.PrivateKey, mint, payTo string, amount uint64) *Payment {
	t.Helper()
	p := &Payment{FeePayer: feePayer, Payer: payer, Mint: mint, PayTo: payTo, Amount: amount}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	p.Instructions = []solana.Instruction{
		ComputeBudget(2, 20_000, 4),
		ComputeBudget(3, 1, 8),
		p.Transfer(t, payTo, amount),
		solana.NewInstruction(MemoProgram, nil, []byte(hex.EncodeToString(nonce))),
	}
	return p
}

// ComputeBudget is a ComputeBudget instruction: discriminator d and a
// little-endian value of size bytes.
func ComputeBudget(d byte, v uint64, size int) solana.Instruction {
	data := make([]byte, 9)
	data[0] = d
	binary.LittleEndian.PutUint64(data[1:], v)
	return solana.NewInstruction(ComputeBudgetProgram, nil, data[:1+size])
}

// Transfer is the payer's TransferChecked of amount to payTo's token
// account.
func (p *Payment) Transfer(t testing.TB, payTo string, amount uint64) solana.Instruction {
	t.Helper()
	mint := pubkey(t, p.Mint)
	owner := solana.PrivateKey(p.Payer).PublicKey()
	src, _, err := solana.FindAssociatedTokenAddress(owner, mint)
	if err != nil {
		t.Fatal(err)
	}
	dst, _, err := solana.FindAssociatedTokenAddress(pubkey(t, payTo), mint)
	if err != nil {
		t.Fatal(err)
	}
	return TransferChecked(amount, src, mint, dst, owner)
}

// TransferChecked is an SPL Token TransferChecked of amount from source to
// destination, signed by authority.
func TransferChecked(amount uint64, source, mint, destination, authority solana.PublicKey) solana.Instruction {
	return token.NewTransferCheckedInstruction(amount, Decimals, source, mint, destination, authority, nil).Build()
}

// Encode builds the transaction on blockhash, signs it as the payer only,
// leaving the fee payer's signature empty, and returns it in base64, as
// payload.transaction carries it.
func (p *Payment) Encode(t testing.TB, blockhash solana.Hash) string {
	t.Helper()
	tx, err := solana.NewTransaction(p.Instructions, blockhash, solana.TransactionPayer(pubkey(t, p.FeePayer)))
	if err != nil {
		t.Fatal(err)
	}
	partialSign(t, tx, p.Payer)
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// Blockhash is a recent blockhash of the network.
func (n *Net) Blockhash(t testing.TB) solana.Hash {
	t.Helper()
	latest, err := n.client.GetLatestBlockhash(background(), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	return latest.Value.Blockhash
}
