package chaintest

import (
	"context"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// TestNet funds a wallet, creates a mint and mints to the wallet, each by a
// real transaction, and reads the results back from the network.
func TestNet(t *testing.T) {
	n := Start(t)
	wallet := NewKey(t)
	n.Airdrop(t, Address(wallet), 2*solana.LAMPORTS_PER_SOL)
	got, err := n.client.GetBalance(t.Context(), solana.PrivateKey(wallet).PublicKey(), "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != 2*solana.LAMPORTS_PER_SOL {
		t.Fatalf("balance after the airdrop = %d lamports, want %d", got.Value, 2*solana.LAMPORTS_PER_SOL)
	}

	mint, authority := n.NewMint(t)
	account, _, err := solana.FindAssociatedTokenAddress(solana.PrivateKey(wallet).PublicKey(), solana.MustPublicKeyFromBase58(mint))
	if err != nil {
		t.Fatal(err)
	}
	if b := n.TokenBalance(t, account.String()); b != 0 {
		t.Fatalf("a token account not yet created holds %s", b)
	}
	n.MintTo(t, mint, authority, Address(wallet), 5*crtx.MicroPerUSDC)
	n.MintTo(t, mint, authority, Address(wallet), 250_000)
	if b := n.TokenBalance(t, account.String()); b != 5_250_000 {
		t.Fatalf("token balance = %s, want 5.25", b)
	}
}

// TestNetOutlivesItsEventQueue reads the network past 1,200 blocks, more
// than its bounded event queue holds: undrained, the queue stops the
// network at about a thousand, and every call hangs.
func TestNetOutlivesItsEventQueue(t *testing.T) {
	n := Start(t)
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		h, err := n.client.GetBlockHeight(ctx, rpc.CommitmentFinalized)
		cancel()
		if err != nil {
			t.Fatalf("the network stopped answering: %v", err)
		}
		if h > 1200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the network reached only block %d", h)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
