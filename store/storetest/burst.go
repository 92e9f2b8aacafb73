package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/crtx-market/crtx"
)

// testOpenBurst: openings that arrive together, as an engine that writes
// them together receives them, each get their own answer: those past the
// in-flight limits, those of a wallet that cannot pay, those of an unknown
// key and those of an Idempotency-Key taken by another of the burst are
// refused and write nothing, and the others open, once each.
func testOpenBurst(t *testing.T, s crtx.Store) {
	opening, alice := Openings(t, s)
	_, _, bob := accounts(crtx.Devnet)
	bobs := func(id string) *crtx.Opening {
		o := opening(id, "key_1")
		escrow := crtx.NewAccount(crtx.Devnet, crtx.AccountEscrow, id, "bob")
		escrow.CreatedAt = t0
		o.Execution.Wallet = "bob"
		o.Accounts = []crtx.Account{bob, escrow}
		o.Escrow.Data["wallet"] = "bob"
		o.Escrow.Postings = []crtx.Posting{{From: bob.Address, To: escrow.Address, Amount: o.Execution.Cost}}
		// One key for all: each refusal must take its claim back with it.
		o.Idempotency = &crtx.Idempotency{Wallet: "bob", Environment: crtx.Devnet, Key: "bob-key", RequestHash: "h", ExecutionID: id, CreatedAt: t0}
		return o
	}

	type call struct {
		o    *crtx.Opening
		kind string
	}
	var calls []call
	for i := range 8 {
		calls = append(calls, call{opening(fmt.Sprintf("a1-%d", i), "key_1"), "alice"})
	}
	for i := range 4 {
		calls = append(calls, call{opening(fmt.Sprintf("a2-%d", i), "key_2"), "alice"})
	}
	for i := range 6 {
		calls = append(calls, call{bobs(fmt.Sprintf("b-%d", i)), "bob"})
	}
	for i := range 3 {
		calls = append(calls, call{opening(fmt.Sprintf("u-%d", i), "key_unknown"), "unknown"})
	}
	results := burst(t, s, calls, func(c call) *crtx.Opening { return c.o })

	opened := map[string]int{}
	seqs := map[int64]bool{}
	for n, c := range calls {
		err := results[n]
		switch {
		case err == nil:
			opened[c.o.Execution.KeyID]++
			if c.kind != "alice" || c.o.Escrow.Seq == 0 || seqs[c.o.Escrow.Seq] {
				t.Errorf("%s opened with seq %d", c.o.Execution.ID, c.o.Escrow.Seq)
			}
			seqs[c.o.Escrow.Seq] = true
			continue
		case c.kind == "alice" && (errors.Is(err, crtx.ErrKeyInFlight) || errors.Is(err, crtx.ErrWalletInFlight)):
		case c.kind == "bob" && errors.Is(err, crtx.ErrInsufficientFunds):
		case c.kind == "unknown" && errors.Is(err, crtx.ErrNotFound):
		default:
			t.Errorf("%s (%s): %v", c.o.Execution.ID, c.kind, err)
		}
		view(t, s, func(ctx context.Context, tx crtx.Tx) error {
			if _, err := tx.Executions.Execution(ctx, c.o.Execution.ID); !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("refused %s was written: %v", c.o.Execution.ID, err)
			}
			return nil
		})
	}
	if opened["key_1"]+opened["key_2"] != 4 || opened["key_1"] > 3 {
		t.Errorf("a burst with a key's limit of 3 and the wallet's of 4 opened %v", opened)
	}
	if got := balances(t, s, crtx.Devnet, alice, bob); !equal(got, []crtx.USDC{10_000_000 - 4*100_000, 0}) {
		t.Errorf("alice, bob = %v; want 4 openings paid", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if all, _, err := tx.Executions.InFlight(ctx, "alice", crtx.Devnet, "key_1"); err != nil || all != 4 {
			t.Errorf("alice's executions in flight = %d, %v; want 4", all, err)
		}
		if i, err := tx.Executions.Idempotency(ctx, "bob", crtx.Devnet, "bob-key"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("a refused opening's Idempotency-Key was kept: %+v, %v", i, err)
		}
		return nil
	})

	// One Idempotency-Key claimed by a burst: one opens, the others are told
	// it is taken.
	var same []*crtx.Opening
	for i := range 5 {
		o := opening(fmt.Sprintf("s-%d", i), "key_2")
		o.MaxKeyInFlight, o.MaxWalletInFlight = 0, 0
		o.Idempotency = &crtx.Idempotency{Wallet: "alice", Environment: crtx.Devnet, Key: "same", RequestHash: "h", ExecutionID: o.Execution.ID, CreatedAt: t0}
		same = append(same, o)
	}
	var won string
	for n, err := range burst(t, s, same, func(o *crtx.Opening) *crtx.Opening { return o }) {
		switch {
		case err == nil && won == "":
			won = same[n].Execution.ID
		case !errors.Is(err, crtx.ErrConflict):
			t.Errorf("%s, a claimed Idempotency-Key: %v, want ErrConflict", same[n].Execution.ID, err)
		}
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if i, err := tx.Executions.Idempotency(ctx, "alice", crtx.Devnet, "same"); err != nil || i.ExecutionID != won {
			t.Errorf("the Idempotency-Key names %+v, %v; want %s", i, err, won)
		}
		return nil
	})
	if got := balances(t, s, crtx.Devnet, alice); !equal(got, []crtx.USDC{10_000_000 - 5*100_000}) {
		t.Errorf("alice = %v; want one more opening paid", got)
	}
}

// burst opens every call's opening at once, released together, and
// returns each one's error.
func burst[C any](t *testing.T, s crtx.Store, calls []C, opening func(C) *crtx.Opening) []error {
	t.Helper()
	errs := make([]error, len(calls))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for n, c := range calls {
		wg.Go(func() {
			<-start
			errs[n] = s.OpenExecution(context.Background(), opening(c))
		})
	}
	close(start)
	wg.Wait()
	return errs
}
