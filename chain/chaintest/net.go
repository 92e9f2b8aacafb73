// Package chaintest runs a real local Solana network for tests (Surfnet,
// through package surfnet) and keys and wallets on it: each helper fails the
// test where surfnet returns an error.
package chaintest

import (
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/surfnet"
)

// Decimals is the decimals of the mints NewMint creates: USDC's.
const Decimals = surfnet.Decimals

// Env names the node_modules folder that holds the Surfnet package, as
// .ci/run installs it.
const Env = surfnet.Env

// Net is a running Surfnet.
type Net struct {
	// RPC is its JSON-RPC URL.
	RPC    string
	net    *surfnet.Net
	client *rpc.Client
}

// Stop stops the network before the test ends: a cluster that went away.
func (n *Net) Stop() { n.net.Stop() }

// Option changes the network Start runs.
type Option func(*options)

type options struct{ slot time.Duration }

// SlotTime sets how long a slot lasts (20 ms unless set): a blockhash
// expires after 150 of them.
func SlotTime(d time.Duration) Option { return func(o *options) { o.slot = d } }

// Start runs a Surfnet for the test and stops it when the test ends. Slots
// of 20 ms finalize a transaction in about a second and expire a blockhash
// in about three. Without node or the package in $CRTX_SURFPOOL it skips the
// test on a developer's machine, and fails it in CI; it never installs the
// package.
func Start(t testing.TB, opts ...Option) *Net {
	t.Helper()
	o := options{slot: 20 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	net, err := surfnet.Start(context.Background(), Require(t), o.slot, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(net.Stop)
	return &Net{RPC: net.RPC, net: net, client: rpc.New(net.RPC)}
}

// Require returns the node_modules folder of $CRTX_SURFPOOL, holding
// Surfnet's package, for a test that runs the network itself or through a
// process it starts. Without it, or without node, it skips the test on a
// developer's machine and fails it in CI.
func Require(t testing.TB) string {
	t.Helper()
	var dir string
	var err error
	if os.Getenv(Env) != "" {
		dir, err = surfnet.Package(context.Background(), io.Discard)
	}
	if dir == "" {
		why := ""
		if err != nil {
			why = ": " + err.Error()
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set to a node_modules folder holding Surfnet's package, or node is missing%s; chain tests may not be skipped in CI", Env, why)
		}
		t.Skipf("set %s to a node_modules folder holding Surfnet's package (as .ci/run installs it), and install node, to run this test%s", Env, why)
	}
	return dir
}

// Airdrop gives address lamports from the network's faucet and waits until
// the airdrop is finalized.
func (n *Net) Airdrop(t testing.TB, address string, lamports uint64) {
	t.Helper()
	check(t, n.net.Airdrop(background(), address, lamports))
}

// Drain sends all of key's SOL but keep (and the fee) to a new address:
// a wallet running out of SOL, as a treasury does when nobody tops it up.
func (n *Net) Drain(t testing.TB, key ed25519.PrivateKey, keep uint64) {
	t.Helper()
	from := solana.PrivateKey(key).PublicKey()
	bal, err := n.net.Balance(background(), from.String())
	check(t, err)
	const fee = 5000
	if bal <= keep+fee {
		return
	}
	to := pubkey(t, Address(NewKey(t)))
	n.Send(t, []solana.Instruction{system.NewTransferInstruction(bal-keep-fee, from, to).Build()}, key)
}

// BlockHeight is the network's finalized block height.
func (n *Net) BlockHeight(t testing.TB) uint64 {
	t.Helper()
	h, err := n.net.BlockHeight(background())
	check(t, err)
	return h
}

// NewMint creates an SPL token mint of 6 decimals, as USDC's, and returns
// its address and its mint authority, which also paid for it.
func (n *Net) NewMint(t testing.TB) (mint string, authority ed25519.PrivateKey) {
	t.Helper()
	authority = NewKey(t)
	n.Airdrop(t, Address(authority), solana.LAMPORTS_PER_SOL)
	mint, err := n.net.NewMint(background(), authority)
	check(t, err)
	return mint, authority
}

// MintTo mints amount of mint into wallet's associated token account,
// creating the account if it is missing; the authority pays.
func (n *Net) MintTo(t testing.TB, mint string, authority ed25519.PrivateKey, wallet string, amount crtx.USDC) {
	t.Helper()
	_, err := n.net.MintTo(background(), mint, authority, wallet, amount)
	check(t, err)
}

// TokenBalance is what a token account holds; an account that does not
// exist holds nothing.
func (n *Net) TokenBalance(t testing.TB, tokenAccount string) crtx.USDC {
	t.Helper()
	b, err := n.net.TokenBalance(background(), tokenAccount)
	check(t, err)
	return b
}

// Send signs instructions with signers, the first paying the fee, sends
// them and waits until they are finalized; it returns the signature.
func (n *Net) Send(t testing.TB, instructions []solana.Instruction, signers ...ed25519.PrivateKey) string {
	t.Helper()
	sig, err := n.net.Send(background(), instructions, signers...)
	check(t, err)
	return sig
}

// SignAndSend does what a wallet does with a transaction it was handed
// (a Solana Pay transaction request's): it signs it as signer, sends it,
// and waits until it is finalized.
func (n *Net) SignAndSend(t testing.TB, raw []byte, signer ed25519.PrivateKey) string {
	t.Helper()
	tx, err := solana.TransactionFromBytes(raw)
	check(t, err)
	partialSign(t, tx, signer)
	sig, err := n.net.SendSigned(background(), tx)
	check(t, err)
	return sig
}

// partialSign signs tx as key alone, leaving the other signatures as they
// are: what a wallet does with a transaction someone else pays for.
func partialSign(t testing.TB, tx *solana.Transaction, key ed25519.PrivateKey) {
	t.Helper()
	k := solana.PrivateKey(key)
	_, err := tx.PartialSign(func(pub solana.PublicKey) *solana.PrivateKey {
		if pub == k.PublicKey() {
			return &k
		}
		return nil
	})
	check(t, err)
}

// AwaitFinalized waits until the transaction of signature is finalized; a
// transaction that failed fails the test.
func (n *Net) AwaitFinalized(t testing.TB, signature string) {
	t.Helper()
	check(t, n.net.AwaitFinalized(background(), signature))
}

// NewKey is a new Ed25519 key, a Solana wallet.
func NewKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	check(t, err)
	return key
}

// Address is the wallet address of key.
func Address(key ed25519.PrivateKey) string {
	return solana.PrivateKey(key).PublicKey().String()
}

func pubkey(t testing.TB, address string) solana.PublicKey {
	t.Helper()
	k, err := solana.PublicKeyFromBase58(address)
	if err != nil {
		t.Fatalf("address %q: %v", address, err)
	}
	return k
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// background is the context of the helpers' calls: not the test's, which
// ends before its cleanups run, and they check the chain too.
func background() context.Context { return context.Background() }
