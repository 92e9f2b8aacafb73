package chain

import (
	"context"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// awaitFinalized polls Status until the signature is finalized.
func awaitFinalized(t *testing.T, c *Client, sig string) crtx.ChainStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		st, err := c.Status(ctx, sig)
		if err != nil {
			t.Fatal(err)
		}
		if st.Err != "" {
			t.Fatalf("%s failed: %s", sig, st.Err)
		}
		if st.Finalized {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not finalized: %+v", sig, st)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestBlockHeightGrows: the finalized height moves on as blocks are made.
func TestBlockHeightGrows(t *testing.T) {
	k := newCluster(t)
	h1, err := k.c.BlockHeight(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	k.net.Airdrop(t, chaintest.Address(chaintest.NewKey(t)), solana.LAMPORTS_PER_SOL)
	h2, err := k.c.BlockHeight(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h1 == 0 || h2 <= h1 {
		t.Fatalf("block height %d, then %d after a finalized transaction", h1, h2)
	}
}
