package http_test

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/market"
)

// A withdrawal whose transfer landed while the node answering for it hides
// its status, and answers the same bytes sent again in each form nodes
// use, is neither refunded nor signed again, however long it waits: a
// "not found" and a refusal prove nothing. Once the status shows, it is
// confirmed, and the chain paid it once (the reserves, checked after the
// test, would be short by a refund or a second transfer).
func TestWithdrawalUnderHiddenStatus(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		form chaintest.Already
	}{
		{"already processed, in the message alone", chaintest.AlreadyMessage},
		{"already processed, as structured data", chaintest.AlreadyStructured},
		{"accepted again", chaintest.AlreadyAccepted},
		{"the provider unavailable", chaintest.AlreadyUnavailable},
	} {
		w := newWallet(t)
		e.fund(w, usdc("3"))
		c := e.signIn(w)
		before := len(e.proxy.Sent())
		hide := func(sig string) bool { return slices.Contains(e.proxy.Sent()[before:], sig) }
		e.proxy.Set("getSignatureStatuses", chaintest.HideStatuses(hide))
		e.proxy.Set("sendTransaction", chaintest.SendsAfterFirst(tc.form))
		wd, err := c.NewWithdrawal(ctx, crtx.Devnet, usdc("2"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The transfer lands, and crtxd, told nothing of it, keeps sending
		// it well past the life of a blockhash (150 blocks).
		var sig string
		waitUntil(t, func() bool {
			got, err := c.GetWithdrawal(ctx, wd.WithdrawalID)
			if err == nil && got.Signature != nil {
				sig = *got.Signature
			}
			return sig != ""
		})
		e.net.AwaitFinalized(t, sig)
		sends := e.proxy.Calls("sendTransaction")
		for end := e.net.BlockHeight(t) + 300; e.net.BlockHeight(t) < end || e.proxy.Calls("sendTransaction") < sends+3; {
			time.Sleep(100 * time.Millisecond)
		}
		got, err := c.GetWithdrawal(ctx, wd.WithdrawalID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Final() || got.Signature == nil || *got.Signature != sig {
			t.Fatalf("%s: with its status hidden, the withdrawal became %+v", tc.name, got)
		}
		if held := e.net.TokenBalance(t, wd.Destination); held != usdc("2") {
			t.Fatalf("%s: the wallet's token account holds %s, want 2", tc.name, held)
		}
		e.proxy.Set("getSignatureStatuses", nil)
		e.proxy.Set("sendTransaction", nil)
		if got := e.confirmed(c, wd.WithdrawalID); *got.Signature != sig {
			t.Errorf("%s: confirmed by %s, sent %s", tc.name, *got.Signature, sig)
		}
		if held := e.net.TokenBalance(t, wd.Destination); held != usdc("2") {
			t.Fatalf("%s: the wallet's token account holds %s once confirmed, want 2", tc.name, held)
		}
		wallet, err := c.Wallet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b := wallet.Balances[crtx.Devnet]; b.Available != usdc("1") {
			t.Errorf("%s: the wallet holds %s on the ledger, want 1", tc.name, b.Available)
		}
	}
}

// waitUntil polls ok for at most a minute.
func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A wallet that opens every deposit request it may and names all their
// references in a flood of cheap transactions costs the watcher one fetch
// of each transaction, not one per reference per turn; its requests cannot
// hold up another wallet's credit; and it may not open more.
func TestDepositWatcherUnderFlood(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	attacker := e.payer(0)
	ca := e.signIn(attacker)
	var refs []solana.PublicKey
	for range market.MaxOpenDeposits {
		d, err := ca.NewDeposit(ctx, crtx.Devnet, usdc("1"))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, solana.MustPublicKeyFromBase58(d.Reference))
	}
	_, err := ca.NewDeposit(ctx, crtx.Devnet, usdc("1"))
	wantCode(t, err, 429, crtx.CodeRateLimited)

	// Zero-lamport transfers to itself, each naming every reference.
	from := solana.MustPublicKeyFromBase58(attacker.address)
	const flood = 30
	var wg sync.WaitGroup
	for i := range flood {
		wg.Go(func() {
			metas := solana.AccountMetaSlice{solana.Meta(from).WRITE().SIGNER(), solana.Meta(from).WRITE()}
			for _, r := range refs {
				metas = append(metas, solana.Meta(r))
			}
			data := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 2), uint64(i))
			e.net.Send(t, []solana.Instruction{solana.NewInstruction(solana.SystemProgramID, metas, data)}, attacker.key)
		})
	}
	wg.Wait()
	gets := e.proxy.Calls("getTransaction")

	// A victim's deposit is credited beside the flood.
	victim := e.payer(usdc("2"))
	cv := e.signIn(victim)
	d, err := cv.NewDeposit(ctx, crtx.Devnet, usdc("2"))
	if err != nil {
		t.Fatal(err)
	}
	e.pay(victim, d, usdc("2"))
	e.credited(cv, d.DepositID, usdc("2"))
	// Many turns later (a turn is 50 ms), the flood was fetched once.
	turns := e.proxy.Calls("getSignaturesForAddress")
	for e.proxy.Calls("getSignaturesForAddress") < turns+10*(market.MaxOpenDeposits+1) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := e.proxy.Calls("getTransaction") - gets; n > flood+5 {
		t.Errorf("the watcher fetched %d transactions for a flood of %d and one payment", n, flood)
	}
	t.Logf("getTransaction: %d before the victim's deposit (the flood: %d transactions naming %d references), %d in all",
		gets, flood, len(refs), e.proxy.Calls("getTransaction"))
}
