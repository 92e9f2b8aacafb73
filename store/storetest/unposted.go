package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testUnposted: the transactions that end executions wait for the roll-up,
// an ExecutionRecord's credits stay out of the balances until they are
// posted, posting indexes them under the accounts they credit, and no
// transaction is posted twice.
func testUnposted(t *testing.T, s crtx.Store) {
	_, alice, bob := fund(t, s, crtx.Devnet)
	treasury := crtx.NewAccount(crtx.Devnet, crtx.AccountTreasury, crtx.TreasuryID, "")
	escrow := func(id string) crtx.Account { return crtx.NewAccount(crtx.Devnet, crtx.AccountEscrow, id, "alice") }
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for i, id := range []string{"e1", "e2", "e3"} {
			data := map[string]string{"execution_id": id, "agent_id": "a1"}
			if _, err := insert(ctx, tx, crtx.Devnet, "open-"+id, crtx.TxEscrowOpened, t0.Add(time.Duration(i)*time.Second), data,
				[]crtx.Account{alice, escrow(id)}, crtx.Posting{From: alice.Address, To: escrow(id).Address, Amount: 1_000_000}); err != nil {
				return err
			}
		}
		for _, id := range []string{"e1", "e2"} {
			data := map[string]string{"execution_id": id, "agent_id": "a1"}
			if _, err := insert(ctx, tx, crtx.Devnet, "settle-"+id, crtx.TxExecutionRecord, t0.Add(time.Minute), data,
				[]crtx.Account{escrow(id), bob, treasury},
				crtx.Posting{From: escrow(id).Address, To: bob.Address, Amount: 990_000},
				crtx.Posting{From: escrow(id).Address, To: treasury.Address, Amount: 10_000}); err != nil {
				return err
			}
		}
		_, err := insert(ctx, tx, crtx.Devnet, "refund-e3", crtx.TxEscrowRefunded, t0.Add(time.Minute), map[string]string{"execution_id": "e3", "agent_id": "a1"},
			[]crtx.Account{escrow("e3"), alice}, crtx.Posting{From: escrow("e3").Address, To: alice.Address, Amount: 1_000_000})
		return err
	})
	// The refund is applied at once; the settlements' credits are not.
	if got := balances(t, s, crtx.Devnet, alice, bob, treasury, escrow("e1"), escrow("e3")); !equal(got, []crtx.USDC{8_000_000, 0, 0, 0, 0}) {
		t.Errorf("before posting: alice, bob, treasury, escrows = %v", got)
	}
	var unposted []crtx.LedgerTx
	view(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		unposted, err = tx.Ledger.Unposted(ctx, crtx.Devnet, 10)
		if err != nil {
			return err
		}
		if txs, err := tx.Ledger.Unposted(ctx, crtx.Mainnet, 10); err != nil || len(txs) != 0 {
			t.Errorf("mainnet unposted = %d, %v; want none", len(txs), err)
		}
		if first, err := tx.Ledger.Unposted(ctx, crtx.Devnet, 1); err != nil || len(first) != 1 || first[0].ID != "settle-e1" {
			t.Errorf("Unposted(limit 1) = %v, %v; want settle-e1", first, err)
		}
		return nil
	})
	var ids []string
	for _, lt := range unposted {
		ids = append(ids, lt.ID)
	}
	if got := strings.Join(ids, " "); got != "settle-e1 settle-e2 refund-e3" {
		t.Fatalf("unposted = %q, want the two settlements and the refund, oldest first", got)
	}
	seqs := []int64{unposted[0].Seq, unposted[1].Seq, unposted[2].Seq}
	credits := []crtx.Credit{
		{Seq: seqs[0], Address: bob.Address, Amount: 990_000}, {Seq: seqs[1], Address: bob.Address, Amount: 990_000},
		{Seq: seqs[0], Address: treasury.Address, Amount: 10_000}, {Seq: seqs[1], Address: treasury.Address, Amount: 10_000},
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Ledger.PostCredits(ctx, crtx.Devnet, seqs, credits)
	})
	if got := balances(t, s, crtx.Devnet, alice, bob, treasury); !equal(got, []crtx.USDC{8_000_000, 1_980_000, 20_000}) {
		t.Errorf("after posting: alice, bob, treasury = %v", got)
	}
	// A second roll-up of the same transactions is refused whole.
	err := s.UpdateGuarded(context.Background(), func(tx crtx.Tx) error {
		return tx.Ledger.PostCredits(context.Background(), crtx.Devnet, seqs[:1], credits[:1])
	})
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("posting a posted transaction again: %v, want ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if txs, err := tx.Ledger.Unposted(ctx, crtx.Devnet, 10); err != nil || len(txs) != 0 {
			t.Errorf("after posting, unposted = %d, %v", len(txs), err)
		}
		txs, err := tx.Ledger.AccountTransactions(ctx, crtx.Devnet, treasury.Address, 10)
		if err != nil || len(txs) != 2 || txs[0].ID != "settle-e2" || txs[1].ID != "settle-e1" {
			t.Errorf("the treasury's transactions = %v, %v; want both settlements, newest first", txs, err)
		}
		return nil
	})
	if got := balances(t, s, crtx.Devnet, bob); !equal(got, []crtx.USDC{1_980_000}) {
		t.Errorf("a refused roll-up moved money: bob = %v", got)
	}
}
