package crtx_test

import (
	"testing"

	"github.com/crtx-market/crtx"
)

// cluster is a crtx.Chain that answers only what explorer links read.
type cluster struct {
	crtx.Chain
	name, rpc string
}

func (c cluster) Cluster() string { return c.name }
func (c cluster) RPC() string     { return c.rpc }

// Explorer links name the cluster; a custom one's RPC URL is written into
// the link only for a validator on this machine, as a provider's URL often
// holds its API key. Wallets are asked to send on the cluster's chain.
func TestSolanaExplorerURL(t *testing.T) {
	for _, c := range []struct {
		c           cluster
		link, chain string
	}{
		{cluster{name: "mainnet-beta", rpc: "https://rpc.example/?api-key=s3cret"}, "https://explorer.solana.com/tx/S", "solana:mainnet"},
		{cluster{name: "devnet", rpc: "https://rpc.example/s3cret"}, "https://explorer.solana.com/tx/S?cluster=devnet", "solana:devnet"},
		{cluster{name: "custom", rpc: "http://127.0.0.1:8899"}, "https://explorer.solana.com/tx/S?cluster=custom&customUrl=http%3A%2F%2F127.0.0.1%3A8899", "solana:localnet"},
		{cluster{name: "custom", rpc: "http://localhost:8899"}, "https://explorer.solana.com/tx/S?cluster=custom&customUrl=http%3A%2F%2Flocalhost%3A8899", "solana:localnet"},
		{cluster{name: "custom", rpc: "https://rpc.example/?api-key=s3cret"}, "https://explorer.solana.com/tx/S?cluster=custom", "solana:localnet"},
	} {
		if got := crtx.SolanaExplorerURL(c.c, "tx", "S"); got != c.link {
			t.Errorf("%s at %s: %s, want %s", c.c.name, c.c.rpc, got, c.link)
		}
		if got := crtx.WalletChain(c.c); got != c.chain {
			t.Errorf("%s: wallet chain %s, want %s", c.c.name, got, c.chain)
		}
	}
}
