package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func accounts(env crtx.Environment) (issuance, alice, bob crtx.Account) {
	issuance = crtx.NewAccount(env, crtx.AccountIssuance, crtx.IssuanceID, "")
	alice = crtx.NewAccount(env, crtx.AccountWallet, "alice", "alice")
	bob = crtx.NewAccount(env, crtx.AccountWallet, "bob", "bob")
	for _, a := range []*crtx.Account{&issuance, &alice, &bob} {
		a.CreatedAt = t0
	}
	return
}

// insert stores a transaction of postings between accts.
func insert(ctx context.Context, tx crtx.Tx, env crtx.Environment, id string, kind crtx.TxKind, at time.Time, data map[string]string, accts []crtx.Account, ps ...crtx.Posting) (crtx.LedgerTx, error) {
	lt := crtx.LedgerTx{ID: id, Environment: env, Kind: kind, Data: data, Postings: ps, CreatedAt: at}
	err := tx.Ledger.InsertTransaction(ctx, &lt, accts...)
	return lt, err
}

// fund creates the three accounts and gives alice 10 USDC.
func fund(t *testing.T, s crtx.Store, env crtx.Environment) (issuance, alice, bob crtx.Account) {
	issuance, alice, bob = accounts(env)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, a := range []crtx.Account{issuance, alice, bob, alice} { // twice: EnsureAccount is idempotent
			if err := tx.Ledger.EnsureAccounts(ctx, a); err != nil {
				return err
			}
		}
		_, err := insert(ctx, tx, env, string(env)+"-fund", crtx.TxDeposit, t0, map[string]string{"wallet": "alice"}, []crtx.Account{issuance, alice},
			crtx.Posting{From: issuance.Address, To: alice.Address, Amount: 10_000_000})
		return err
	})
	return
}

// postAll does the roll-up's part of the store's work: it posts every
// unposted transaction's deferred credits.
func postAll(t *testing.T, s crtx.Store, env crtx.Environment) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		txs, err := tx.Ledger.Unposted(ctx, env, 1000)
		if err != nil {
			return err
		}
		var seqs []int64
		var credits []crtx.Credit
		for _, lt := range txs {
			seqs = append(seqs, lt.Seq)
			credits = append(credits, lt.DeferredCredits()...)
		}
		return tx.Ledger.PostCredits(ctx, env, seqs, credits)
	})
}

func balances(t *testing.T, s crtx.Store, env crtx.Environment, accts ...crtx.Account) []crtx.USDC {
	t.Helper()
	out := make([]crtx.USDC, len(accts))
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for i, a := range accts {
			got, err := tx.Ledger.Account(ctx, env, a.Address)
			if err != nil {
				return err
			}
			out[i] = got.Balance
		}
		return nil
	})
	return out
}

func testPostings(t *testing.T, s crtx.Store) {
	issuance, alice, bob := fund(t, s, crtx.Mainnet)
	var lt crtx.LedgerTx
	update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		lt, err = insert(ctx, tx, crtx.Mainnet, "tx2", crtx.TxDeposit, t0.Add(time.Second), map[string]string{"note": "ü ✓"}, []crtx.Account{alice, bob},
			crtx.Posting{From: alice.Address, To: bob.Address, Amount: 3_000_000},
			crtx.Posting{From: bob.Address, To: alice.Address, Amount: 1})
		return err
	})
	if lt.Seq == 0 {
		t.Error("InsertTransaction did not assign a seq")
	}
	got := balances(t, s, crtx.Mainnet, issuance, alice, bob)
	if want := []crtx.USDC{-10_000_000, 7_000_001, 2_999_999}; !equal(got, want) {
		t.Fatalf("balances = %v, want %v", got, want)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		back, err := tx.Ledger.Transaction(ctx, crtx.Mainnet, "tx2")
		if err != nil {
			return err
		}
		if back.Leaf() != lt.Leaf() || back.Seq != lt.Seq || back.BlockHeight != 0 || len(back.Postings) != 2 {
			t.Errorf("transaction read back differs: %+v vs %+v", back, lt)
		}
		if _, err := tx.Ledger.Transaction(ctx, crtx.Mainnet, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown transaction: %v", err)
		}
		if a, err := tx.Ledger.Account(ctx, crtx.Mainnet, alice.Address); err != nil || a.Balance != 7_000_001 {
			t.Errorf("alice's account = %+v, %v", a, err)
		}
		return nil
	})
}

func testNonNegative(t *testing.T, s crtx.Store) {
	issuance, alice, bob := fund(t, s, crtx.Mainnet)
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		_, err := insert(context.Background(), tx, crtx.Mainnet, "over", crtx.TxWithdrawal, t0, nil, []crtx.Account{alice, bob, issuance},
			crtx.Posting{From: alice.Address, To: bob.Address, Amount: 4_000_000},
			crtx.Posting{From: alice.Address, To: issuance.Address, Amount: 6_000_001})
		return err
	})
	if !errors.Is(err, crtx.ErrInsufficientFunds) {
		t.Fatalf("overdraft: %v, want ErrInsufficientFunds", err)
	}
	if got := balances(t, s, crtx.Mainnet, issuance, alice, bob); !equal(got, []crtx.USDC{-10_000_000, 10_000_000, 0}) {
		t.Fatalf("a refused transaction moved money: %v", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Ledger.Transaction(ctx, crtx.Mainnet, "over"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("refused transaction was kept: %v", err)
		}
		return nil
	})
	// Exactly to zero is fine.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		_, err := insert(ctx, tx, crtx.Mainnet, "all", crtx.TxWithdrawal, t0, nil, []crtx.Account{alice, issuance},
			crtx.Posting{From: alice.Address, To: issuance.Address, Amount: 10_000_000})
		return err
	})
}

// InsertTransaction creates the accounts its postings name that do not
// exist yet, starting at their net amount, and refuses postings between
// accounts it was not given.
func testPostingAccounts(t *testing.T, s crtx.Store) {
	issuance, alice, bob := fund(t, s, crtx.Mainnet)
	carol := crtx.NewAccount(crtx.Mainnet, crtx.AccountEscrow, "carol", "alice")
	dave := crtx.NewAccount(crtx.Mainnet, crtx.AccountWallet, "dave", "dave")
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		_, err := insert(ctx, tx, crtx.Mainnet, "to-new", crtx.TxEscrowOpened, t0, map[string]string{"execution_id": "carol"}, []crtx.Account{alice, carol},
			crtx.Posting{From: alice.Address, To: carol.Address, Amount: 2_500_000})
		return err
	})
	if got := balances(t, s, crtx.Mainnet, alice, carol); !equal(got, []crtx.USDC{7_500_000, 2_500_000}) {
		t.Fatalf("balances = %v", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Ledger.Account(ctx, crtx.Mainnet, carol.Address)
		if err != nil || got.Kind != crtx.AccountEscrow || got.Ref != "carol" || got.Owner != "alice" {
			t.Errorf("created account = %+v, %v", got, err)
		}
		return nil
	})
	// A new account cannot pay: it starts below zero.
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		_, err := insert(context.Background(), tx, crtx.Mainnet, "from-new", crtx.TxWithdrawal, t0, nil, []crtx.Account{dave, bob},
			crtx.Posting{From: dave.Address, To: bob.Address, Amount: 1})
		return err
	})
	if !errors.Is(err, crtx.ErrInsufficientFunds) {
		t.Errorf("paying from a new account: %v, want ErrInsufficientFunds", err)
	}
	// Postings to an account the caller did not describe are refused.
	err = s.Update(context.Background(), func(tx crtx.Tx) error {
		_, err := insert(context.Background(), tx, crtx.Mainnet, "undescribed", crtx.TxDeposit, t0, nil, []crtx.Account{issuance},
			crtx.Posting{From: issuance.Address, To: bob.Address, Amount: 1})
		return err
	})
	if err == nil {
		t.Error("a posting to an account not given was stored")
	}
	// A transaction that touches an escrow names its execution.
	err = s.Update(context.Background(), func(tx crtx.Tx) error {
		_, err := insert(context.Background(), tx, crtx.Mainnet, "unnamed", crtx.TxExecutionRecord, t0, map[string]string{"execution_id": "dave"},
			[]crtx.Account{carol, bob}, crtx.Posting{From: carol.Address, To: bob.Address, Amount: 1})
		return err
	})
	if err == nil {
		t.Error("a transaction touching the escrow of carol under another execution id was stored")
	}
	// An escrow's history: what touches it, not what merely names its execution.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := insert(ctx, tx, crtx.Mainnet, "settled", crtx.TxExecutionRecord, t0.Add(time.Second), map[string]string{"execution_id": "carol"},
			[]crtx.Account{carol, bob}, crtx.Posting{From: carol.Address, To: bob.Address, Amount: 2_500_000}); err != nil {
			return err
		}
		_, err := insert(ctx, tx, crtx.Mainnet, "aside", crtx.TxCollateralSlashed, t0.Add(2*time.Second), map[string]string{"execution_id": "carol"},
			[]crtx.Account{issuance, alice}, crtx.Posting{From: issuance.Address, To: alice.Address, Amount: 1})
		return err
	})
	// The settlement's credit to bob waits for the roll-up; its debit of
	// the escrow does not.
	if got := balances(t, s, crtx.Mainnet, bob, carol); !equal(got, []crtx.USDC{0, 0}) {
		t.Errorf("before the roll-up: balances = %v, want bob's credit pending and carol's debit applied", got)
	}
	postAll(t, s, crtx.Mainnet)
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, c := range []struct {
			addr  string
			limit int
			want  string
		}{{carol.Address, 10, "settled to-new"}, {carol.Address, 1, "settled"}, {bob.Address, 10, "settled"}, {alice.Address, 10, "aside to-new mainnet-fund"}} {
			txs, err := tx.Ledger.AccountTransactions(ctx, crtx.Mainnet, c.addr, c.limit)
			var ids []string
			for _, lt := range txs {
				ids = append(ids, lt.ID)
			}
			if got := strings.Join(ids, " "); err != nil || got != c.want {
				t.Errorf("AccountTransactions(%s, %d) = %q, %v; want %q", c.addr, c.limit, got, err, c.want)
			}
		}
		return nil
	})
	if got := balances(t, s, crtx.Mainnet, issuance, alice, bob, carol); !equal(got, []crtx.USDC{-10_000_001, 7_500_001, 2_500_000, 0}) {
		t.Errorf("refused transactions moved money: %v", got)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Ledger.Account(ctx, crtx.Mainnet, dave.Address); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("a refused transaction created its account: %v", err)
		}
		return nil
	})
}

func testQueries(t *testing.T, s crtx.Store) {
	issuance, alice, bob := fund(t, s, crtx.Devnet)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for i, at := range []time.Time{t0.Add(time.Minute), t0.Add(2 * time.Minute)} {
			if _, err := insert(ctx, tx, crtx.Devnet, "air"+string(rune('a'+i)), crtx.TxAirdrop, at, map[string]string{"wallet": "bob"}, []crtx.Account{issuance, bob},
				crtx.Posting{From: issuance.Address, To: bob.Address, Amount: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Ledger.Airdrops(ctx, crtx.Devnet, "bob", t0.Add(90*time.Second))
		if err != nil || len(got) != 1 || got[0].ID != "airb" {
			t.Errorf("Airdrops = %+v, %v", got, err)
		}
		// alice's deposit names her wallet too, but is no airdrop.
		got, _ = tx.Ledger.Airdrops(ctx, crtx.Devnet, "alice", t0)
		if len(got) != 0 {
			t.Errorf("Airdrops matched another kind: %+v", got)
		}
		txs, err := tx.Ledger.AccountTransactions(ctx, crtx.Devnet, alice.Address, 10)
		if err != nil || len(txs) != 1 {
			t.Errorf("AccountTransactions(alice) = %d, %v", len(txs), err)
		}
		txs, _ = tx.Ledger.AccountTransactions(ctx, crtx.Devnet, issuance.Address, 2)
		if len(txs) != 2 || txs[0].ID != "airb" {
			t.Errorf("AccountTransactions(issuance, 2) is not newest first: %+v", txs)
		}
		all, err := tx.Ledger.Transactions(ctx, crtx.Devnet, 0, 10)
		if err != nil || len(all) != 3 {
			t.Fatalf("Transactions = %d, %v", len(all), err)
		}
		rest, _ := tx.Ledger.Transactions(ctx, crtx.Devnet, all[0].Seq, 10)
		if len(rest) != 2 || rest[0].ID != all[1].ID {
			t.Errorf("Transactions after seq: %+v", rest)
		}
		accts, err := tx.Ledger.Accounts(ctx, crtx.Devnet)
		if err != nil || len(accts) != 3 {
			t.Errorf("Accounts = %d, %v", len(accts), err)
		}
		return nil
	})
}

func testBlocks(t *testing.T, s crtx.Store) {
	fund(t, s, crtx.Mainnet)
	var seq int64
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Ledger.LastBlock(ctx, crtx.Mainnet); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("LastBlock before any: %v", err)
		}
		un, err := tx.Ledger.UnsealedTransactions(ctx, crtx.Mainnet, 10)
		if err != nil || len(un) != 1 {
			t.Fatalf("UnsealedTransactions = %d, %v", len(un), err)
		}
		seq = un[0].Seq
		return nil
	})
	b := crtx.Block{Environment: crtx.Mainnet, Height: 1, PrevHash: crtx.GenesisPrevHash, MerkleRoot: "root",
		TxCount: 1, SealedAt: t0, Hash: "hash", Signature: "sig"}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Ledger.InsertBlock(ctx, b, []int64{seq}) })
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		b2 := b
		b2.Height = 2
		return tx.Ledger.InsertBlock(context.Background(), b2, []int64{seq})
	})
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("sealing a transaction twice: %v, want ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		last, err := tx.Ledger.LastBlock(ctx, crtx.Mainnet)
		if err != nil || last != b {
			t.Errorf("LastBlock = %+v, %v; want %+v", last, err, b)
		}
		if _, err := tx.Ledger.Block(ctx, crtx.Mainnet, 2); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("block 2 after a refused insert: %v", err)
		}
		txs, err := tx.Ledger.BlockTransactions(ctx, crtx.Mainnet, 1)
		if err != nil || len(txs) != 1 || txs[0].BlockHeight != 1 {
			t.Errorf("BlockTransactions = %+v, %v", txs, err)
		}
		if un, _ := tx.Ledger.UnsealedTransactions(ctx, crtx.Mainnet, 10); len(un) != 0 {
			t.Errorf("%d transactions still unsealed", len(un))
		}
		return nil
	})
}

func testEnvironmentsApart(t *testing.T, s crtx.Store) {
	fund(t, s, crtx.Mainnet)
	_, alice, _ := fund(t, s, crtx.Devnet)
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, env := range crtx.Environments {
			a, err := tx.Ledger.Account(ctx, env, alice.Address)
			if err != nil || a.Balance != 10_000_000 {
				t.Errorf("%s alice = %+v, %v", env, a, err)
			}
		}
		if _, err := tx.Ledger.Transaction(ctx, crtx.Mainnet, "devnet-fund"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("mainnet reads a devnet transaction: %v", err)
		}
		return nil
	})
}

func equal(a, b []crtx.USDC) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
