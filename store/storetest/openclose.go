package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testOpenClose: an execution opens at its agent's terms, with its
// Idempotency-Key, its escrow and its key's usage, all or nothing; each
// refusal names its cause and writes nothing. It closes once.
func testOpenClose(t *testing.T, s crtx.Store) {
	ctx := context.Background()
	_, alice, bob := fund(t, s, crtx.Devnet)
	limit := crtx.USDC(250_000)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		for _, k := range []crtx.APIKey{{ID: "key_1", SpendLimit: &limit}, {ID: "key_r"}} {
			k.Wallet, k.Name, k.Prefix, k.Hash, k.Environment, k.CreatedAt = "alice", k.ID, "p", "hash-"+k.ID, crtx.Devnet, t0
			if err := tx.Access.InsertKey(ctx, k); err != nil {
				return err
			}
		}
		return tx.Access.RevokeKey(ctx, "key_r", t0)
	})
	escrow := func(id string) crtx.Account {
		a := crtx.NewAccount(crtx.Devnet, crtx.AccountEscrow, id, "alice")
		a.CreatedAt = t0
		return a
	}
	opening := func(id string, change func(*crtx.Execution)) *crtx.Opening {
		e := execution(id, t0)
		e.Wallet = "alice"
		if change != nil {
			change(&e)
		}
		payer := crtx.NewAccount(crtx.Devnet, crtx.AccountWallet, e.Wallet, e.Wallet)
		return &crtx.Opening{Execution: e, Accounts: []crtx.Account{payer, escrow(id)},
			Escrow: crtx.LedgerTx{ID: "open-" + id, Environment: crtx.Devnet, Kind: crtx.TxEscrowOpened, CreatedAt: t0,
				Data:     map[string]string{"execution_id": id, "agent_id": "a1", "wallet": e.Wallet},
				Postings: []crtx.Posting{{From: payer.Address, To: escrow(id).Address, Amount: e.Cost}}}}
	}
	spent := func() (int64, crtx.USDC) {
		var k crtx.APIKey
		view(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
			k, err = tx.Access.KeyByID(ctx, "key_1")
			return err
		})
		return k.ExecutionCount, k.TotalSpent
	}
	absent := func(id string) {
		t.Helper()
		view(t, s, func(ctx context.Context, tx crtx.Tx) error {
			if _, err := tx.Executions.Execution(ctx, id); !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("refused execution %s was written: %v", id, err)
			}
			if _, err := tx.Ledger.Transaction(ctx, crtx.Devnet, "open-"+id); !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("the escrow of refused execution %s was written: %v", id, err)
			}
			if i, err := tx.Executions.Idempotency(ctx, "alice", crtx.Devnet, "idem-"+id); !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("the Idempotency-Key of refused execution %s was kept: %+v, %v", id, i, err)
			}
			return nil
		})
	}

	e1 := opening("e1", nil)
	e1.Idempotency = &crtx.Idempotency{Wallet: "alice", Environment: crtx.Devnet, Key: "idem-1", RequestHash: "h1", ExecutionID: "e1", CreatedAt: t0}
	if err := s.OpenExecution(ctx, e1); err != nil || e1.Escrow.Seq == 0 {
		t.Fatalf("OpenExecution: %v, seq %d", err, e1.Escrow.Seq)
	}
	if got := balances(t, s, crtx.Devnet, alice, escrow("e1")); !equal(got, []crtx.USDC{9_900_000, 100_000}) {
		t.Errorf("after opening: alice, escrow = %v", got)
	}
	if n, sum := spent(); n != 1 || sum != 100_000 {
		t.Errorf("key usage = %d executions, %s USDC; want 1, 0.1", n, sum)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if e, err := tx.Executions.Execution(ctx, "e1"); err != nil || !reflect.DeepEqual(e, e1.Execution) {
			t.Errorf("execution e1 reads back as\n%+v, %v; want\n%+v", e, err, e1.Execution)
		}
		if i, err := tx.Executions.Idempotency(ctx, "alice", crtx.Devnet, "idem-1"); err != nil || i.ExecutionID != "e1" {
			t.Errorf("idempotency key = %+v, %v", i, err)
		}
		return nil
	})

	refusals := []struct {
		name string
		o    *crtx.Opening
		want error
	}{
		{"taken Idempotency-Key", func() *crtx.Opening {
			o := opening("e2", nil)
			o.Idempotency = &crtx.Idempotency{Wallet: "alice", Environment: crtx.Devnet, Key: "idem-1", RequestHash: "h2", ExecutionID: "e2", CreatedAt: t0}
			return o
		}(), crtx.ErrConflict},
		{"stale price", opening("e3", func(e *crtx.Execution) {
			e.Cost, e.Held, e.Base, e.CreatorAmount, e.PlatformAmount = 90_000, 90_000, 90_000, 89_100, 900
		}), crtx.ErrTermsChanged},
		{"stale endpoint", opening("e4", func(e *crtx.Execution) { e.EndpointURL = "https://old.example/execute" }), crtx.ErrTermsChanged},
		{"revoked key", opening("e5", func(e *crtx.Execution) { e.KeyID = "key_r" }), crtx.ErrNotFound},
		// The wallet is debited before the key is charged: a wallet that
		// cannot pay is refused as such whatever the key.
		{"empty wallet", opening("e6", func(e *crtx.Execution) { e.Wallet, e.KeyID = "bob", "key_r" }), crtx.ErrInsufficientFunds},
		{"no wallet", opening("e7", func(e *crtx.Execution) { e.Wallet = "carol" }), crtx.ErrInsufficientFunds},
	}
	for _, r := range refusals {
		if r.o.Idempotency == nil {
			id := r.o.Execution.ID
			r.o.Idempotency = &crtx.Idempotency{Wallet: "alice", Environment: crtx.Devnet, Key: "idem-" + id, RequestHash: "h", ExecutionID: id, CreatedAt: t0}
		}
		if err := s.OpenExecution(ctx, r.o); !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
		absent(r.o.Execution.ID)
	}
	// An id used twice is an error, not the Idempotency-Key being taken.
	twice := opening("e1", nil)
	twice.Escrow.ID = "open-e1-again"
	twice.Idempotency = &crtx.Idempotency{Wallet: "alice", Environment: crtx.Devnet, Key: "idem-again", RequestHash: "h", ExecutionID: "e1", CreatedAt: t0}
	if err := s.OpenExecution(ctx, twice); err == nil || errors.Is(err, crtx.ErrConflict) {
		t.Errorf("opening e1 again: %v, want an error other than ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Executions.Idempotency(ctx, "alice", crtx.Devnet, "idem-again"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("the key of the refused second e1 was kept: %v", err)
		}
		return nil
	})
	if err := s.OpenExecution(ctx, opening("e8", nil)); err != nil {
		t.Fatal(err)
	}
	past := opening("e9", nil)
	if err := s.OpenExecution(ctx, past); !errors.Is(err, crtx.ErrSpendLimit) {
		t.Errorf("past the key's limit: %v, want ErrSpendLimit", err)
	}
	absent("e9")
	if got := balances(t, s, crtx.Devnet, alice, bob); !equal(got, []crtx.USDC{9_800_000, 0}) {
		t.Errorf("after the refusals: alice, bob = %v; want only e1 and e8 paid", got)
	}
	if n, sum := spent(); n != 2 || sum != 200_000 {
		t.Errorf("key usage = %d executions, %s USDC; want 2, 0.2", n, sum)
	}

	// e1 completes: its result, its record and its webhook, once.
	done := t0.Add(time.Second)
	ms := int64(1000)
	completed := e1.Execution
	completed.Status, completed.CompletedAt, completed.ExecutionTimeMS = crtx.ExecCompleted, &done, &ms
	completed.ResultCID, completed.ResultHash, completed.Signature, completed.Result = "cid-e1", "hash-e1", "sig-e1", "hello"
	creator := crtx.NewAccount(crtx.Devnet, crtx.AccountWallet, "w1", "w1")
	treasury := crtx.NewAccount(crtx.Devnet, crtx.AccountTreasury, crtx.TreasuryID, "")
	settle := &crtx.Closing{Execution: completed,
		Record: crtx.LedgerTx{ID: "settle-e1", Environment: crtx.Devnet, Kind: crtx.TxExecutionRecord, CreatedAt: done,
			Data: map[string]string{"execution_id": "e1", "agent_id": "a1"},
			Postings: []crtx.Posting{{From: escrow("e1").Address, To: creator.Address, Amount: 99_000},
				{From: escrow("e1").Address, To: treasury.Address, Amount: 1_000}}},
		Accounts: []crtx.Account{escrow("e1"), creator, treasury},
		Webhook:  &crtx.Webhook{ExecutionID: "e1", URL: "https://hooks.example/e1", NextAt: done, CreatedAt: done}}
	if ok, err := s.CloseExecution(ctx, settle); !ok || err != nil || settle.Record.Seq == 0 {
		t.Fatalf("CloseExecution: %v, %v, seq %d", ok, err, settle.Record.Seq)
	}
	refund := func(e crtx.Execution) *crtx.Closing {
		e.Status, e.CompletedAt, e.ErrorCode, e.ErrorMessage = crtx.ExecFailed, &done, "execution_failed", "no"
		return &crtx.Closing{Execution: e,
			Record: crtx.LedgerTx{ID: "refund-" + e.ID, Environment: crtx.Devnet, Kind: crtx.TxEscrowRefunded, CreatedAt: done,
				Data:     map[string]string{"execution_id": e.ID, "agent_id": "a1"},
				Postings: []crtx.Posting{{From: escrow(e.ID).Address, To: alice.Address, Amount: e.Cost}}},
			Accounts: []crtx.Account{escrow(e.ID), alice}}
	}
	again := refund(e1.Execution)
	if ok, err := s.CloseExecution(ctx, again); ok || err != nil {
		t.Errorf("closing a final execution again: %v, %v; want false", ok, err)
	}
	if ok, err := s.CloseExecution(ctx, refund(opening("e8", nil).Execution)); !ok || err != nil {
		t.Errorf("refunding e8: %v, %v", ok, err)
	}
	// The refund comes off the key's spent (and frees its limit); the run
	// stays counted. The completed e1, closed again, takes nothing off.
	if n, sum := spent(); n != 2 || sum != 100_000 {
		t.Errorf("key usage after e8's refund = %d executions, %s USDC; want 2, 0.1", n, sum)
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Access.RefundKeyUsage(ctx, "key_1", 1_000_000) })
	if n, sum := spent(); n != 2 || sum != 0 {
		t.Errorf("key usage after refunding more than it spent = %d executions, %s USDC; want 2, 0", n, sum)
	}
	// The creator's and the platform's shares wait for the roll-up.
	if got := balances(t, s, crtx.Devnet, alice, escrow("e1"), escrow("e8"), creator, treasury); !equal(got, []crtx.USDC{9_900_000, 0, 0, 0, 0}) {
		t.Errorf("after closing: alice, escrows, creator, treasury = %v", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if e, err := tx.Executions.Execution(ctx, "e1"); err != nil || e.Status != crtx.ExecCompleted || e.ResultHash != "hash-e1" {
			t.Errorf("execution e1 = %s %q, %v", e.Status, e.ResultHash, err)
		}
		if r, err := tx.Executions.Result(ctx, "cid-e1"); err != nil || r != "hello" {
			t.Errorf("result = %q, %v", r, err)
		}
		if w, err := tx.Deliveries.Webhook(ctx, "e1"); err != nil || w.URL != "https://hooks.example/e1" {
			t.Errorf("webhook = %+v, %v", w, err)
		}
		if _, err := tx.Ledger.Transaction(ctx, crtx.Devnet, "refund-e1"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("the second closing of e1 wrote its transaction: %v", err)
		}
		unposted, err := tx.Ledger.Unposted(ctx, crtx.Devnet, 10)
		if err != nil || len(unposted) != 2 || unposted[0].ID != "settle-e1" || unposted[1].ID != "refund-e8" {
			t.Errorf("unposted = %v, %v; want settle-e1, refund-e8", unposted, err)
		}
		return nil
	})
	postAll(t, s, crtx.Devnet)
	if got := balances(t, s, crtx.Devnet, creator, treasury); !equal(got, []crtx.USDC{99_000, 1_000}) {
		t.Errorf("after the roll-up: creator, treasury = %v", got)
	}
	// The creator's earnings by agent count the settled e1 alone.
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Executions.CreatorEarningsByAgent(ctx, "w1", crtx.Devnet)
		if err != nil || len(got) != 1 || got["a1"] != 99_000 {
			t.Errorf("CreatorEarningsByAgent = %v, %v; want a1: 0.099", got, err)
		}
		// alice's e1 completed and e8 failed; the others never ended.
		runs, err := tx.Executions.AgentRuns(ctx, "a1", crtx.Devnet, t0.Truncate(24*time.Hour))
		if want := []crtx.DayRuns{{Date: "2026-11-22", Ended: 2, Succeeded: 1}}; err != nil || fmt.Sprint(runs) != fmt.Sprint(want) {
			t.Errorf("AgentRuns = %v, %v; want %v", runs, err, want)
		}
		return nil
	})
}
