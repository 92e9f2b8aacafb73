package chain

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

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
	missing := k.sign(t, wallet, crtx.MicroPerUSDC, "w-0", 0)
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
	st := k.sign(t, wallet, 3*crtx.MicroPerUSDC, "w-1", 1)
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
	// The node refuses bytes it holds (in its message alone): not an error.
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
	// The nonce advanced where st landed: the next transfer on that account
	// is signed on the new value, read from a node past that slot.
	again, err := k.c.SignTransfer(t.Context(), crtx.Transfer{Wallet: wallet, Amount: 1, Memo: "w-2",
		NonceAccount: k.c.NonceAccounts()[1], After: done.Slot})
	if err != nil {
		t.Fatal(err)
	}
	if again.Nonce == st.Nonce {
		t.Fatalf("signed on the spent nonce %s", st.Nonce)
	}
	if err := k.c.Send(t.Context(), again.Raw); err != nil {
		t.Fatal(err)
	}
	awaitFinalized(t, k.c, again.Signature)
	if got := k.net.TokenBalance(t, dest); got != 3_000_001 {
		t.Fatalf("the wallet's token account holds %s, want 3.000001", got)
	}

	for name, tr := range map[string]crtx.Transfer{
		"nothing":             {Wallet: wallet, Amount: 0, NonceAccount: k.c.NonceAccounts()[2]},
		"a malformed wallet":  {Wallet: "nope", Amount: 1, NonceAccount: k.c.NonceAccounts()[2]},
		"another nonce":       {Wallet: wallet, Amount: 1, NonceAccount: wallet},
		"a node behind after": {Wallet: wallet, Amount: 1, NonceAccount: k.c.NonceAccounts()[2], After: 1 << 50},
	} {
		if st, err := k.c.SignTransfer(t.Context(), tr); err == nil {
			t.Errorf("SignTransfer of %s signed %s", name, st.Signature)
		}
	}
	if _, err := k.c.SignTransfer(t.Context(), crtx.Transfer{Wallet: wallet, NonceAccount: k.c.NonceAccounts()[2]}); !errors.Is(err, ErrAmount) {
		t.Errorf("SignTransfer of nothing: %v", err)
	}
}

// TestDurableTransfer: a transfer signed on a nonce still lands long after
// a blockhash would have expired, so a withdrawal is never signed twice;
// and two signed on one nonce value land one, whichever is sent first.
func TestDurableTransfer(t *testing.T) {
	k := newCluster(t)
	k.net.MintTo(t, k.mint, k.mintAuthority, k.c.Treasury(), 10*crtx.MicroPerUSDC)
	wallet := chaintest.Address(chaintest.NewKey(t))
	k.net.MintTo(t, k.mint, k.mintAuthority, wallet, 0)
	first := k.sign(t, wallet, crtx.MicroPerUSDC, "w-5", 0)
	twin := k.sign(t, wallet, 2*crtx.MicroPerUSDC, "w-6", 0)
	if first.Nonce != twin.Nonce {
		t.Fatalf("two transfers signed at once on one account took nonces %s and %s", first.Nonce, twin.Nonce)
	}
	// A blockhash lives 150 blocks: wait for twice that.
	start := k.net.BlockHeight(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for h := start; h < start+300; h = k.net.BlockHeight(t) {
		select {
		case <-ctx.Done():
			t.Fatalf("block height %d never passed %d", h, start+300)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := k.c.Send(t.Context(), first.Raw); err != nil {
		t.Fatal(err)
	}
	awaitFinalized(t, k.c, first.Signature)
	// The twin's nonce is spent: whatever the node answers, it never lands.
	if err := k.c.Send(t.Context(), twin.Raw); err != nil {
		t.Logf("sending on a spent nonce: %v", err)
	}
	for range 20 {
		got, err := k.c.Status(t.Context(), twin.Signature)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found && got.Err == "" {
			t.Fatalf("a transfer on a spent nonce landed: %+v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	dest, _ := k.c.TokenAccountOf(wallet)
	if got := k.net.TokenBalance(t, dest); got != crtx.MicroPerUSDC {
		t.Fatalf("the wallet holds %s, want 1", got)
	}
}

// The nonce accounts' addresses are public (derived from the treasury's):
// SOL sent to one before the treasury made it does not keep it from being
// a nonce account, and withdrawals on it land.
func TestNonceAccountFundedFirst(t *testing.T) {
	net := chaintest.Start(t)
	mint, authority := net.NewMint(t)
	treasury := chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 10*solana.LAMPORTS_PER_SOL)
	c, err := New(Config{RPC: net.RPC, Mint: mint, Treasury: treasury, NonceAccounts: 2})
	if err != nil {
		t.Fatal(err)
	}
	net.Airdrop(t, c.NonceAccounts()[0], 890_880) // the least an empty account holds: below a nonce account's rent
	net.Airdrop(t, c.NonceAccounts()[1], solana.LAMPORTS_PER_SOL)
	if err := c.EnsureTokenAccount(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureNonceAccounts(t.Context()); err != nil {
		t.Fatal(err)
	}
	net.MintTo(t, mint, authority, c.Treasury(), 2)
	wallet := chaintest.Address(chaintest.NewKey(t))
	net.MintTo(t, mint, authority, wallet, 0)
	for _, account := range c.NonceAccounts() {
		st, err := c.SignTransfer(t.Context(), crtx.Transfer{Wallet: wallet, Amount: 1, Memo: "w-" + account, NonceAccount: account})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Send(t.Context(), st.Raw); err != nil {
			t.Fatal(err)
		}
		awaitFinalized(t, c, st.Signature)
	}
	dest, _ := c.TokenAccountOf(wallet)
	if got := net.TokenBalance(t, dest); got != 2 {
		t.Fatalf("the wallet holds %s, want 0.000002", got)
	}
}

// Two replicas starting at once on one treasury both create its nonce
// accounts: one transaction lands, and the other start finds them made.
func TestNonceAccountsMadeByTwoAtOnce(t *testing.T) {
	net := chaintest.Start(t)
	mint, _ := net.NewMint(t)
	treasury := chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 10*solana.LAMPORTS_PER_SOL)
	var errs [2]error
	var wg sync.WaitGroup
	for i := range errs {
		c, err := New(Config{RPC: net.RPC, Mint: mint, Treasury: treasury, NonceAccounts: 4})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = c.EnsureNonceAccounts(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}
