package chain

import (
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// cluster is a Surfnet with a USDC-like mint and a Client whose treasury
// has SOL for fees and its token account.
type cluster struct {
	net           *chaintest.Net
	c             *Client
	mint          string
	mintAuthority ed25519.PrivateKey
	treasury      ed25519.PrivateKey
}

func newCluster(t testing.TB) cluster {
	t.Helper()
	net := chaintest.Start(t)
	mint, authority := net.NewMint(t)
	treasury := chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 10*solana.LAMPORTS_PER_SOL)
	c, err := New(Config{RPC: net.RPC, Mint: mint, Treasury: treasury})
	if err != nil {
		t.Fatal(err)
	}
	c.poll = 50 * time.Millisecond
	if err := c.EnsureTokenAccount(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureNonceAccounts(t.Context()); err != nil {
		t.Fatal(err)
	}
	return cluster{net: net, c: c, mint: mint, mintAuthority: authority, treasury: treasury}
}

// sign signs a transfer of amount to wallet on the treasury's account-th
// nonce account.
func (k cluster) sign(t *testing.T, wallet string, amount crtx.USDC, memo string, account int) crtx.SignedTransfer {
	t.Helper()
	st, err := k.c.SignTransfer(t.Context(), crtx.Transfer{Wallet: wallet, Amount: amount, Memo: memo, NonceAccount: k.c.NonceAccounts()[account]})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// wallet is a new wallet with SOL for fees and amount of the mint.
func (k cluster) wallet(t testing.TB, amount crtx.USDC) ed25519.PrivateKey {
	t.Helper()
	w := chaintest.NewKey(t)
	k.net.Airdrop(t, chaintest.Address(w), solana.LAMPORTS_PER_SOL)
	k.net.MintTo(t, k.mint, k.mintAuthority, chaintest.Address(w), amount)
	return w
}

// readTransaction fetches a landed transaction and decodes it.
func readTransaction(t *testing.T, c *Client, signature string) (*solana.Transaction, *rpc.GetTransactionResult) {
	t.Helper()
	version := uint64(0)
	out, err := c.rpc.GetTransaction(t.Context(), solana.MustSignatureFromBase58(signature), &rpc.GetTransactionOpts{
		Encoding:                       solana.EncodingBase64,
		MaxSupportedTransactionVersion: &version,
	})
	if err != nil {
		t.Fatalf("getTransaction %s: %v", signature, err)
	}
	tx, err := out.Transaction.GetTransaction()
	if err != nil {
		t.Fatal(err)
	}
	return tx, out
}

// TestEnsureTokenAccount creates the treasury's token account once: a
// second call finds it and pays nothing.
func TestEnsureTokenAccount(t *testing.T) {
	k := newCluster(t)
	if b := k.net.TokenBalance(t, k.c.TokenAccount()); b != 0 {
		t.Fatalf("a new token account holds %s", b)
	}
	want, err := k.c.TokenAccountOf(k.c.Treasury())
	if err != nil || want != k.c.TokenAccount() {
		t.Fatalf("TokenAccountOf(treasury) = %q, %v; TokenAccount = %q", want, err, k.c.TokenAccount())
	}
	fees, err := k.c.FeeBalance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := k.c.EnsureTokenAccount(t.Context()); err != nil {
		t.Fatal(err)
	}
	after, err := k.c.FeeBalance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after != fees {
		t.Fatalf("the second EnsureTokenAccount spent %d lamports", fees-after)
	}
	if got := k.c.Cluster(); got != "custom" {
		t.Fatalf("Cluster of a local network = %q", got)
	}
	if k.c.Mint() != k.mint || k.c.Treasury() != chaintest.Address(k.treasury) || k.c.RPC() != k.net.RPC {
		t.Fatalf("accessors: mint %s treasury %s rpc %s", k.c.Mint(), k.c.Treasury(), k.c.RPC())
	}
}

// TestNewRefuses a configuration the treasury could not work with.
func TestNewRefuses(t *testing.T) {
	net := chaintest.Start(t)
	mint, authority := net.NewMint(t)
	treasury := chaintest.NewKey(t)
	for name, cfg := range map[string]Config{
		"no RPC":         {Mint: mint, Treasury: treasury},
		"malformed mint": {RPC: net.RPC, Mint: "not-a-key", Treasury: treasury},
		"short key":      {RPC: net.RPC, Mint: mint, Treasury: treasury[:32]},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: New = %v, want ErrConfig", name, err)
		}
	}
	// A mint that is none is found when the treasury's account is made.
	for name, cfg := range map[string]Config{
		"missing mint":     {RPC: net.RPC, Mint: chaintest.Address(chaintest.NewKey(t)), Treasury: treasury},
		"a wallet as mint": {RPC: net.RPC, Mint: chaintest.Address(authority), Treasury: treasury},
	} {
		c, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.EnsureTokenAccount(t.Context()); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: EnsureTokenAccount = %v, want ErrConfig", name, err)
		}
	}
}

func TestGuessCluster(t *testing.T) {
	for url, want := range map[string]string{
		"https://api.mainnet-beta.solana.com":         "mainnet-beta",
		"https://mainnet.helius-rpc.com/?api-key=x":   "mainnet-beta",
		"https://api.devnet.solana.com":               "devnet",
		"https://api.testnet.solana.com":              "testnet",
		"http://127.0.0.1:8899":                       "custom",
		"https://rpc.example.com/devnet-looking-path": "custom",
	} {
		if got := guessCluster(url); got != want {
			t.Errorf("guessCluster(%q) = %q, want %q", url, got, want)
		}
	}
}
