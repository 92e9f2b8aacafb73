package chain

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx/chain/chaintest"
)

// TestBalances reads the treasury's USDC and SOL as the chain holds them.
func TestBalances(t *testing.T) {
	k := newCluster(t)
	k.net.MintTo(t, k.mint, k.mintAuthority, chaintest.Address(k.treasury), 12_345_678)
	got, err := k.c.Balance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got != 12_345_678 || got != k.net.TokenBalance(t, k.c.TokenAccount()) {
		t.Fatalf("Balance = %s, want 12.345678", got)
	}
	fees, err := k.c.FeeBalance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Ten SOL airdropped, less the token account's rent and a fee.
	if fees >= 10*solana.LAMPORTS_PER_SOL || fees < 9*solana.LAMPORTS_PER_SOL {
		t.Fatalf("FeeBalance = %d lamports, want a little under 10 SOL", fees)
	}
}
