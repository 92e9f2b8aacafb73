package chain

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// BenchmarkWatchFlood is the deposit watcher's cost a turn when one wallet
// names its 10 deposits' references in 30 cheap transactions, and pays one
// of them: getTransaction and getSignaturesForAddress calls a turn (a turn
// reads every reference once), for the watcher as it is ("cursor": each
// signature examined once) and as it was ("every turn": every signature of
// every reference fetched again each turn, the baseline).
func BenchmarkWatchFlood(b *testing.B) {
	k := newCluster(b)
	payer := k.wallet(b, crtx.MicroPerUSDC)
	from := solana.PrivateKey(payer).PublicKey()
	refs := make([]solana.PublicKey, 10)
	for i := range refs {
		refs[i] = solana.PrivateKey(chaintest.NewKey(b)).PublicKey()
	}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			metas := solana.AccountMetaSlice{solana.Meta(from).WRITE().SIGNER(), solana.Meta(from).WRITE()}
			for _, r := range refs {
				metas = append(metas, solana.Meta(r))
			}
			data := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 2), uint64(i))
			k.net.Send(b, []solana.Instruction{solana.NewInstruction(solana.SystemProgramID, metas, data)}, payer)
		})
	}
	wg.Wait()
	if _, err := Pay(b.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: crtx.MicroPerUSDC,
		SPLToken: k.mint, References: []string{refs[0].String()}}); err != nil {
		b.Fatal(err)
	}
	turns := func(b *testing.B, fresh bool) {
		until := make([]string, len(refs))
		before, _ := k.c.RPCCalls()
		b.ResetTimer()
		for b.Loop() {
			for i, r := range refs {
				if fresh {
					k.c.seen = newSeen(seenSize)
					until[i] = ""
				}
				scan, err := k.c.Payments(b.Context(), r.String(), until[i], 200)
				if err != nil {
					b.Fatal(err)
				}
				until[i] = scan.Until
			}
		}
		after, _ := k.c.RPCCalls()
		for _, m := range []string{"getTransaction", "getSignaturesForAddress"} {
			b.ReportMetric(float64(after[m]-before[m])/float64(b.N), m+"/turn")
		}
	}
	b.Run("cursor", func(b *testing.B) { turns(b, false) })
	b.Run("every turn", func(b *testing.B) { turns(b, true) })
}
