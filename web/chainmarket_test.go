package web_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
	marketpkg "github.com/crtx-market/crtx/market"
)

// chainMarket is a marketplace whose devnet is on a local Solana network
// (Surfnet), in a USDC mint of the test's own.
type chainMarket struct {
	*daemon.Daemon
	net      *chaintest.Net
	mint     string
	mintAuth ed25519.PrivateKey
}

// marketOnChain starts market with devnet on a local Solana network. When
// the test ends, while the marketplace still runs, both ledgers must sum
// to zero and verify, and the reserves must be what the treasury's token
// account holds on the chain, covering what the ledger owes.
func marketOnChain(t *testing.T) *chainMarket {
	t.Helper()
	net := chaintest.Start(t)
	mint, auth := net.NewMint(t)
	pub, treasury, _ := ed25519.GenerateKey(nil)
	net.Airdrop(t, crtx.Address(pub), 10_000_000_000)
	file := filepath.Join(t.TempDir(), "treasury.json")
	if err := keyfile.Write(file, treasury); err != nil {
		t.Fatal(err)
	}
	d := market(t, func(c *daemon.Config) {
		c.SolanaRPCDevnet, c.USDCMintDevnet, c.TreasuryKeypair = net.RPC, mint, file
		c.ChainPoll, c.AnchorInterval = 50*time.Millisecond, 200*time.Millisecond
	})
	m := &chainMarket{Daemon: d, net: net, mint: mint, mintAuth: auth}
	// Registered after market's, so it runs first, with the marketplace up.
	t.Cleanup(func() { m.check(t) })
	return m
}

func (m *chainMarket) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, env := range crtx.Environments {
		r, err := marketpkg.VerifyLedger(ctx, m.Store, env, m.Market.AuthorityPublicKey())
		if err != nil {
			t.Fatalf("verify %s: %v", env, err)
		}
		if r.Sum != 0 || !r.OK() {
			t.Errorf("%s ledger: sum %s, problems %v", env, r.Sum, r.Problems)
		}
	}
	rs, err := client.New(m.URL, "").Reserves(ctx)
	if err != nil {
		t.Fatalf("reserves: %v", err)
	}
	if len(rs.Reserves) != 1 || rs.Reserves[0].Environment != crtx.Devnet {
		t.Fatalf("reserves: %+v, want devnet's alone", rs.Reserves)
	}
	r := rs.Reserves[0]
	if held := m.net.TokenBalance(t, r.TokenAccount); r.OnChain != held {
		t.Errorf("reserves on chain %s, the treasury's token account holds %s", r.OnChain, held)
	}
	if r.Surplus < 0 || r.Surplus != r.OnChain-r.Liabilities {
		t.Errorf("reserves: %+v", r)
	}
}

// tokenAccount is wallet's USDC token account on devnet's chain.
func (m *chainMarket) tokenAccount(t *testing.T, wallet string) string {
	t.Helper()
	ata, err := m.Market.Chain(crtx.Devnet).TokenAccountOf(wallet)
	if err != nil {
		t.Fatal(err)
	}
	return ata
}
