package chain

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// TestAnchor writes a block's memo, signed by the ledger authority with the
// treasury paying, and finds it in the finalized transaction.
func TestAnchor(t *testing.T) {
	k := newCluster(t)
	authority := chaintest.NewKey(t)
	memoText := crtx.AnchorMemo(crtx.Block{Environment: "devnet", Height: 42, Hash: "ab12"})
	a, err := k.c.Anchor(t.Context(), memoText, authority)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cluster != "custom" || a.Slot == 0 {
		t.Fatalf("Anchor = %+v", a)
	}
	st, err := k.c.Status(t.Context(), a.Signature)
	if err != nil || !st.Finalized || st.Slot != a.Slot {
		t.Fatalf("Status of the anchor = %+v, %v; want finalized at slot %d", st, err, a.Slot)
	}
	tx, out := readTransaction(t, k.c, a.Signature)
	keys := tx.Message.AccountKeys
	if keys[0].String() != k.c.Treasury() {
		t.Fatalf("fee payer %s, want the treasury %s", keys[0], k.c.Treasury())
	}
	auth := solana.PrivateKey(authority).PublicKey()
	if !tx.IsSigner(auth) {
		t.Fatalf("the authority %s did not sign the anchor", auth)
	}
	if err := tx.VerifySignatures(); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, in := range tx.Message.Instructions {
		if keys[in.ProgramIDIndex] != solana.MemoProgramID {
			continue
		}
		if string(in.Data) == memoText && len(in.Accounts) == 1 && keys[in.Accounts[0]] == auth {
			found = true
		}
	}
	if !found {
		t.Fatalf("no memo %q signed by the authority in %v (logs %q)", memoText, tx.Message.Instructions, out.Meta.LogMessages)
	}
	if _, err := k.c.Anchor(t.Context(), "x", authority[:10]); err == nil {
		t.Fatal("Anchor with a malformed authority key succeeded")
	}
}
