package chain

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// TestSignTransferSend pays a wallet's token account; the same bytes sent
// three times pay once. A transfer to a wallet with no token account
// creates none (the treasury pays no rent): it fails on the chain.
func TestSignTransferSend(t *testing.T) {
	k := newCluster(t)
	k.net.MintTo(t, k.mint, k.mintAuthority, k.c.Treasury(), 10*crtx.MicroPerUSDC)
	wallet := chaintest.Address(chaintest.NewKey(t))
	dest, err := k.c.TokenAccountOf(wallet)
	if err != nil {
		t.Fatal(err)
	}
	if has, err := k.c.HasTokenAccount(t.Context(), wallet); err != nil || has {
		t.Fatalf("HasTokenAccount of a new wallet = %v, %v", has, err)
	}
	missing, err := k.c.SignTransfer(t.Context(), wallet, crtx.MicroPerUSDC, "w-0")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.c.Send(t.Context(), missing.Raw); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, err := k.c.Status(t.Context(), missing.Signature)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found && got.Finalized {
			if got.Err == "" {
				t.Fatalf("a transfer to a missing token account succeeded: %+v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a transfer to a missing token account: %+v", got)
		}
	}
	k.net.MintTo(t, k.mint, k.mintAuthority, wallet, 0) // the wallet makes its account
	if has, err := k.c.HasTokenAccount(t.Context(), wallet); err != nil || !has {
		t.Fatalf("HasTokenAccount once made = %v, %v", has, err)
	}
	st, err := k.c.SignTransfer(t.Context(), wallet, 3*crtx.MicroPerUSDC, "w-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.c.Status(t.Context(), st.Signature); err != nil || got.Found {
		t.Fatalf("a signed transfer not sent: Status = %+v, %v", got, err)
	}
	if err := k.c.Send(t.Context(), st.Raw); err != nil {
		t.Fatal(err)
	}
	if err := k.c.Send(t.Context(), st.Raw); err != nil {
		t.Fatalf("sending the same bytes again: %v", err)
	}
	done := awaitFinalized(t, k.c, st.Signature)
	if !done.Found || done.Slot == 0 {
		t.Fatalf("Status = %+v", done)
	}
	if err := k.c.Send(t.Context(), st.Raw); err != nil {
		t.Fatalf("sending the bytes of a finalized transfer: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if got := k.net.TokenBalance(t, dest); got != 3*crtx.MicroPerUSDC {
		t.Fatalf("the wallet's token account holds %s, want 3", got)
	}
	if got, err := k.c.Balance(t.Context()); err != nil || got != 7*crtx.MicroPerUSDC {
		t.Fatalf("the treasury holds %s, %v; want 7", got, err)
	}
	// Two transfers alike but for their memo are two transactions, even
	// on one blockhash: each lands.
	twin, err := k.c.SignTransfer(t.Context(), wallet, 3*crtx.MicroPerUSDC, "w-1b")
	if err != nil {
		t.Fatal(err)
	}
	if twin.Signature == st.Signature {
		t.Fatal("two withdrawals of one amount to one wallet signed the same transaction")
	}
	// The account exists now; the idempotent create lets a second
	// withdrawal to it through.
	again, err := k.c.SignTransfer(t.Context(), wallet, 1, "w-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.c.Send(t.Context(), again.Raw); err != nil {
		t.Fatal(err)
	}
	awaitFinalized(t, k.c, again.Signature)
	if got := k.net.TokenBalance(t, dest); got != 3_000_001 {
		t.Fatalf("the wallet's token account holds %s, want 3.000001", got)
	}

	if _, err := k.c.SignTransfer(t.Context(), wallet, 0, "w-3"); !errors.Is(err, ErrAmount) {
		t.Fatalf("SignTransfer of nothing: %v", err)
	}
	if _, err := k.c.SignTransfer(t.Context(), "nope", 1, "w-4"); !errors.Is(err, ErrAddress) {
		t.Fatalf("SignTransfer to a malformed wallet: %v", err)
	}
}

// TestExpiredTransferNeverLands: bytes sent after the finalized height
// passed their last valid block height are never found, so a withdrawal
// may be signed anew.
func TestExpiredTransferNeverLands(t *testing.T) {
	k := newCluster(t)
	k.net.MintTo(t, k.mint, k.mintAuthority, k.c.Treasury(), 10*crtx.MicroPerUSDC)
	wallet := chaintest.Address(chaintest.NewKey(t))
	st, err := k.c.SignTransfer(t.Context(), wallet, crtx.MicroPerUSDC, "w-5")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		h, err := k.c.BlockHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h > st.LastValidBlockHeight {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("block height %d never passed %d", h, st.LastValidBlockHeight)
		case <-time.After(100 * time.Millisecond):
		}
	}
	// The node may refuse the bytes or take them; either way they never
	// land.
	if err := k.c.Send(t.Context(), st.Raw); err != nil {
		t.Logf("sending expired bytes: %v", err)
	}
	for range 20 {
		got, err := k.c.Status(t.Context(), st.Signature)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found {
			t.Fatalf("an expired transfer landed: %+v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	dest, _ := k.c.TokenAccountOf(wallet)
	if got := k.net.TokenBalance(t, dest); got != 0 {
		t.Fatalf("the wallet got %s from an expired transfer", got)
	}
}
