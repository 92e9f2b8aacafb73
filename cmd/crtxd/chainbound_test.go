package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
)

// Once an environment has run on a chain, money never enters it by hand,
// even from an offline command started without the chain's flags; and the
// store keeps its mint, so crtxd refuses to start on another.
func TestChainBoundEnvironment(t *testing.T) {
	net := chaintest.Start(t)
	mint, _ := net.NewMint(t)
	other, _ := net.NewMint(t)
	treasury := chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 1_000_000_000)
	dir := t.TempDir()
	tfile, data := filepath.Join(dir, "treasury.json"), filepath.Join(dir, "data")
	if err := keyfile.Write(tfile, treasury); err != nil {
		t.Fatal(err)
	}
	cfg := daemon.Defaults()
	cfg.Addr, cfg.Data = "127.0.0.1:0", data
	cfg.SolanaRPCDevnet, cfg.USDCMintDevnet, cfg.TreasuryKeypair = net.RPC, mint, tfile
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	w := chaintest.Address(chaintest.NewKey(t))
	if code, out := crtxd(t, "ledger", "deposit", "--data", data, "--environment", "devnet", "--wallet", w, "--amount", "1"); code == 0 ||
		!strings.Contains(out, crtx.CodeChainConfigured) {
		t.Errorf("ledger deposit on devnet bound to a chain: %d %s", code, out)
	}
	if code, out := crtxd(t, "ledger", "deposit", "--data", data, "--environment", "mainnet", "--wallet", w, "--amount", "1"); code != 0 {
		t.Errorf("ledger deposit on mainnet, which has no chain: %d %s", code, out)
	}
	cfg.USDCMintDevnet = other
	if _, err := daemon.Start(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), mint) {
		t.Errorf("crtxd started on another mint: %v", err)
	}
}
