package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/crtx-market/crtx"
)

// testInFlight: an opening counts the key's and the wallet's executions in
// flight, itself included, and is refused past its limits, writing
// nothing; openings at once cannot pass a limit together; an execution
// that ended no longer counts.
func testInFlight(t *testing.T, s crtx.Store) {
	ctx := context.Background()
	opening, alice := Openings(t, s)

	var mu sync.Mutex
	results := map[string]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := s.OpenExecution(ctx, opening(fmt.Sprintf("k1-%d", i), "key_1"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				results["opened"]++
			case errors.Is(err, crtx.ErrKeyInFlight):
				results["key"]++
			default:
				t.Errorf("opening at once: %v", err)
			}
		})
	}
	wg.Wait()
	if results["opened"] != 3 || results["key"] != 5 {
		t.Errorf("8 openings at once with a key's limit of 3: %v", results)
	}
	if err := s.OpenExecution(ctx, opening("k2-a", "key_2")); err != nil {
		t.Fatalf("another key, within the wallet's limit: %v", err)
	}
	if err := s.OpenExecution(ctx, opening("k2-b", "key_2")); !errors.Is(err, crtx.ErrWalletInFlight) {
		t.Errorf("past the wallet's limit: %v, want ErrWalletInFlight", err)
	}
	if got := balances(t, s, crtx.Devnet, alice); !equal(got, []crtx.USDC{10_000_000 - 4*100_000}) {
		t.Errorf("alice = %v: refused openings took money", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if all, key, err := tx.Executions.InFlight(ctx, "alice", crtx.Devnet, "key_2"); err != nil || all != 4 || key != 1 {
			t.Errorf("InFlight = %d, %d, %v; want 4, 1", all, key, err)
		}
		if _, err := tx.Executions.Execution(ctx, "k2-b"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("the refused execution was written: %v", err)
		}
		return nil
	})

	// One ends: the wallet has room for one more.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e, err := tx.Executions.Execution(ctx, "k2-a")
		if err != nil {
			return err
		}
		done := t0
		e.Status, e.CompletedAt, e.ErrorCode = crtx.ExecFailed, &done, crtx.CodeCancelled
		_, err = tx.Executions.FinishExecution(ctx, e)
		return err
	})
	if err := s.OpenExecution(ctx, opening("k2-c", "key_2")); err != nil {
		t.Errorf("once one ended: %v", err)
	}
	// Without limits, none is counted.
	free := opening("k2-d", "key_2")
	free.MaxKeyInFlight, free.MaxWalletInFlight = 0, 0
	if err := s.OpenExecution(ctx, free); err != nil {
		t.Errorf("without limits: %v", err)
	}
}

// Openings sets up, in s, a devnet wallet "alice" holding 10 USDC with
// two API keys (key_1, key_2) and an agent "a1" of 0.1 USDC, and returns
// an opening of an execution id by one of those keys, with in-flight
// limits of 3 a key and 4 for the wallet, and alice's account.
func Openings(t *testing.T, s crtx.Store) (opening func(id, key string) *crtx.Opening, alice crtx.Account) {
	_, alice, _ = fund(t, s, crtx.Devnet)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		for _, id := range []string{"key_1", "key_2"} {
			k := crtx.APIKey{ID: id, Wallet: "alice", Name: id, Prefix: "p", Hash: "hash-" + id, Environment: crtx.Devnet, CreatedAt: t0}
			if err := tx.Access.InsertKey(ctx, k); err != nil {
				return err
			}
		}
		return nil
	})
	opening = func(id, key string) *crtx.Opening {
		e := execution(id, t0)
		e.Wallet, e.KeyID = "alice", key
		escrow := crtx.NewAccount(crtx.Devnet, crtx.AccountEscrow, id, "alice")
		escrow.CreatedAt = t0
		return &crtx.Opening{Execution: e, Accounts: []crtx.Account{alice, escrow}, MaxKeyInFlight: 3, MaxWalletInFlight: 4,
			Escrow: crtx.LedgerTx{ID: "open-" + id, Environment: crtx.Devnet, Kind: crtx.TxEscrowOpened, CreatedAt: t0,
				Data:     map[string]string{"execution_id": id, "agent_id": "a1", "wallet": "alice"},
				Postings: []crtx.Posting{{From: alice.Address, To: escrow.Address, Amount: e.Cost}}}}
	}
	return opening, alice
}
