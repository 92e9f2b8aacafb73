package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testMeteredClose: a metered execution opens holding its most, within
// its agent's terms, and closes charged from its usage: the rest of the
// hold is back in the caller's balance with the closing (not deferred to
// the roll-up, as the creator's and the platform's shares are), and off
// its key's spent; the row keeps the charge and the signed usage.
func testMeteredClose(t *testing.T, s crtx.Store) {
	ctx := context.Background()
	_, alice, _ := fund(t, s, crtx.Devnet)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, metered(agent("a1", "w1", 70_000, []string{"data"}, t0))); err != nil {
			return err
		}
		return tx.Access.InsertKey(ctx, crtx.APIKey{ID: "key_1", Wallet: "alice", Name: "k", Prefix: "p", Hash: "h",
			Environment: crtx.Devnet, CreatedAt: t0})
	})
	escrow := crtx.NewAccount(crtx.Devnet, crtx.AccountEscrow, "m1", "alice")
	open := func(held crtx.USDC) *crtx.Opening {
		e := execution("m1", t0)
		e.Wallet, e.Base, e.Per1k, e.Cost, e.Held, e.CreatorAmount, e.PlatformAmount = "alice", 70_000, 2_500, held, held, held-held/100, held/100
		return &crtx.Opening{Execution: e, Accounts: []crtx.Account{alice, escrow},
			Escrow: crtx.LedgerTx{ID: "open-m1", Environment: crtx.Devnet, Kind: crtx.TxEscrowOpened, CreatedAt: t0,
				Data:     map[string]string{"execution_id": "m1", "agent_id": "a1", "wallet": "alice"},
				Postings: []crtx.Posting{{From: alice.Address, To: escrow.Address, Amount: held}}}}
	}
	// Holding more than the most, or less than the base, is not at the
	// agent's terms.
	for _, held := range []crtx.USDC{500_001, 69_999} {
		if err := s.OpenExecution(ctx, open(held)); !errors.Is(err, crtx.ErrTermsChanged) {
			t.Errorf("an opening holding %s: %v, want ErrTermsChanged", held, err)
		}
	}
	o := open(400_000) // the caller lowered the most
	if err := s.OpenExecution(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := balances(t, s, crtx.Devnet, alice, escrow); !equal(got, []crtx.USDC{9_600_000, 400_000}) {
		t.Errorf("after the opening: alice, escrow = %v", got)
	}

	done := t0.Add(time.Second)
	tokens := int64(20_000)
	e := o.Execution
	e.Status, e.CompletedAt, e.TokensUsed, e.UsageSignature = crtx.ExecCompleted, &done, &tokens, "ed25519:usage"
	e.ResultCID, e.ResultHash, e.Signature, e.Result = "cid-m1", "hash-m1", "sig-m1", "words"
	e.Cost, e.CreatorAmount, e.PlatformAmount = 120_000, 118_800, 1_200
	creator := crtx.NewAccount(crtx.Devnet, crtx.AccountWallet, "w1", "w1")
	treasury := crtx.NewAccount(crtx.Devnet, crtx.AccountTreasury, crtx.TreasuryID, "")
	c := &crtx.Closing{Execution: e,
		Record: crtx.LedgerTx{ID: "settle-m1", Environment: crtx.Devnet, Kind: crtx.TxExecutionRecord, CreatedAt: done,
			Data: map[string]string{"execution_id": "m1", "agent_id": "a1", "returned_to": alice.Address},
			Postings: []crtx.Posting{{From: escrow.Address, To: creator.Address, Amount: 118_800},
				{From: escrow.Address, To: treasury.Address, Amount: 1_200}, {From: escrow.Address, To: alice.Address, Amount: 280_000}}},
		Accounts: []crtx.Account{escrow, creator, treasury, alice}}
	if ok, err := s.CloseExecution(ctx, c); !ok || err != nil {
		t.Fatalf("CloseExecution: %v, %v", ok, err)
	}
	if got := balances(t, s, crtx.Devnet, alice, escrow, creator, treasury); !equal(got, []crtx.USDC{9_880_000, 0, 0, 0}) {
		t.Errorf("after the closing: alice, escrow, creator, treasury = %v; want the unused hold back at once", got)
	}
	postAll(t, s, crtx.Devnet)
	if got := balances(t, s, crtx.Devnet, alice, creator, treasury); !equal(got, []crtx.USDC{9_880_000, 118_800, 1_200}) {
		t.Errorf("after the roll-up: alice, creator, treasury = %v", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Executions.Execution(ctx, "m1")
		if err != nil || got.Cost != 120_000 || got.Held != 400_000 || got.Base != 70_000 || got.Per1k != 2_500 ||
			got.CreatorAmount != 118_800 || got.PlatformAmount != 1_200 || got.UsageSignature != "ed25519:usage" || got.Returned() != 280_000 {
			t.Errorf("execution m1 = %+v, %v", got, err)
		}
		k, err := tx.Access.KeyByID(ctx, "key_1")
		if err != nil || k.TotalSpent != 120_000 {
			t.Errorf("key spent %s, %v; want the charge, 0.12", k.TotalSpent, err)
		}
		return nil
	})
}
