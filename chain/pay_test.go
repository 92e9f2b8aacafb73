package chain

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// TestPayIsWhatAWalletSends: the memo immediately before the transfer,
// the references after the transfer's own keys, in order, read-only and
// not signing.
func TestPayIsWhatAWalletSends(t *testing.T) {
	k := newCluster(t)
	payer := k.wallet(t, 5*crtx.MicroPerUSDC)
	refs := []string{chaintest.Address(chaintest.NewKey(t)), chaintest.Address(chaintest.NewKey(t))}
	sig, err := Pay(t.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 1_250_000, SPLToken: k.mint, References: refs, Memo: "order 7"})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := readTransaction(t, k.c, sig)
	keys := tx.Message.AccountKeys
	ins := tx.Message.Instructions
	if len(ins) != 2 || keys[ins[0].ProgramIDIndex] != solana.MemoProgramID || string(ins[0].Data) != "order 7" || keys[ins[1].ProgramIDIndex] != solana.TokenProgramID {
		t.Fatalf("instructions %+v, want the memo then the transfer", ins)
	}
	acc := ins[1].Accounts
	if len(acc) != 6 || keys[acc[4]].String() != refs[0] || keys[acc[5]].String() != refs[1] {
		t.Fatalf("transfer accounts %v, want its four then the references %v", acc, refs)
	}
	for _, r := range refs {
		pk := solana.MustPublicKeyFromBase58(r)
		if w, _ := tx.IsWritable(pk); w || tx.IsSigner(pk) {
			t.Fatalf("reference %s is writable or signs", r)
		}
	}
	if got := k.net.TokenBalance(t, k.c.TokenAccount()); got != 1_250_000 {
		t.Fatalf("the treasury holds %s, want 1.25", got)
	}
	if _, err := Pay(t.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 1}); err == nil {
		t.Fatal("Pay of a SOL transfer request succeeded")
	}
}
