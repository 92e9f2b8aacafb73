package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func deposit(id, wallet string, env crtx.Environment, amount crtx.USDC, at time.Time) crtx.Deposit {
	return crtx.Deposit{ID: id, Wallet: wallet, Environment: env, Amount: amount, Reference: "ref-" + id, Memo: "crtx " + id,
		Status: crtx.DepositAwaitingPayment, CreatedAt: at, ExpiresAt: at.Add(crtx.DepositTTL)}
}

func depositIDs(ds []crtx.Deposit) string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return fmt.Sprint(ids)
}

func testDeposits(t *testing.T, s crtx.Store) {
	d1 := deposit("d1", "alice", crtx.Devnet, 5_000_000, t0)
	d2 := deposit("d2", "alice", crtx.Devnet, 5_000_000, t0.Add(time.Minute))
	d3 := deposit("d3", "alice", crtx.Mainnet, 1_000_000, t0.Add(2*time.Minute))
	d4 := deposit("d4", "bob", crtx.Devnet, 1_000_000, t0.Add(3*time.Minute))
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, d := range []crtx.Deposit{d1, d2, d3, d4} {
			if err := tx.Funds.InsertDeposit(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		again := deposit("d5", "bob", crtx.Devnet, 1, t0)
		again.Reference = d1.Reference
		return tx.Funds.InsertDeposit(context.Background(), again)
	})
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a second deposit of one reference: %v, want ErrConflict", err)
	}

	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if got, err := tx.Funds.Deposit(ctx, "d1"); err != nil || got != d1 {
			t.Errorf("Deposit(d1) = %+v, %v; want %+v", got, err, d1)
		}
		if got, err := tx.Funds.DepositByReference(ctx, d2.Reference); err != nil || got != d2 {
			t.Errorf("DepositByReference = %+v, %v; want %+v", got, err, d2)
		}
		if _, err := tx.Funds.Deposit(ctx, "d5"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("Deposit(d5): %v, want ErrNotFound", err)
		}
		if _, err := tx.Funds.DepositByReference(ctx, "ref-none"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("DepositByReference(unknown): %v, want ErrNotFound", err)
		}
		list, total, err := tx.Funds.Deposits(ctx, "alice", crtx.Devnet, 10, 0)
		if err != nil || total != 2 || depositIDs(list) != "[d2 d1]" {
			t.Errorf("Deposits = %s, %d, %v; want [d2 d1], 2", depositIDs(list), total, err)
		}
		list, total, err = tx.Funds.Deposits(ctx, "alice", crtx.Devnet, 1, 1)
		if err != nil || total != 2 || depositIDs(list) != "[d1]" {
			t.Errorf("Deposits' second page = %s, %d, %v; want [d1], 2", depositIDs(list), total, err)
		}
		// Never checked, the deposits go in the order they were made.
		watched, err := tx.Funds.WatchedDeposits(ctx, crtx.Devnet, t0, 10, 10)
		if err != nil || depositIDs(watched) != "[d1 d2 d4]" {
			t.Errorf("WatchedDeposits = %s, %v; want [d1 d2 d4]", depositIDs(watched), err)
		}
		// One a wallet: bob's comes before alice's second.
		watched, err = tx.Funds.WatchedDeposits(ctx, crtx.Devnet, t0, 10, 1)
		if err != nil || depositIDs(watched) != "[d1 d4]" {
			t.Errorf("WatchedDeposits, one a wallet = %s, %v; want [d1 d4]", depositIDs(watched), err)
		}
		for _, c := range []struct {
			now, since   time.Time
			open, recent int
		}{
			{t0.Add(5 * time.Minute), t0.Add(30 * time.Second), 2, 1},
			{t0.Add(5 * time.Minute), t0.Add(-time.Second), 2, 2},
			{t0.Add(24*time.Hour + 30*time.Second), t0.Add(23 * time.Hour), 1, 0},
			{t0.Add(48 * time.Hour), t0, 0, 0},
		} {
			open, recent, err := tx.Funds.DepositCounts(ctx, "alice", crtx.Devnet, c.now, c.since)
			if err != nil || open != c.open || recent != c.recent {
				t.Errorf("DepositCounts(alice, devnet, %v, %v) = %d, %d, %v; want %d, %d", c.now, c.since, open, recent, err, c.open, c.recent)
			}
		}
		return nil
	})

	// The least recently checked first; none made before since.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Funds.CheckedDeposit(ctx, "d1", t0.Add(time.Hour), "sig-d1"); err != nil {
			return err
		}
		if err := tx.Funds.CheckedDeposit(ctx, "d4", t0.Add(30*time.Minute), ""); err != nil {
			return err
		}
		if err := tx.Funds.CheckedDeposit(ctx, "none", t0, ""); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("CheckedDeposit(unknown): %v, want ErrNotFound", err)
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, c := range []struct {
			since time.Time
			limit int
			want  string
		}{
			{t0, 10, "[d2 d4 d1]"},
			{t0, 2, "[d2 d4]"},
			{t0.Add(time.Minute), 10, "[d2 d4]"},
			{t0.Add(time.Hour), 10, "[]"},
		} {
			watched, err := tx.Funds.WatchedDeposits(ctx, crtx.Devnet, c.since, c.limit, 10)
			if err != nil || depositIDs(watched) != c.want {
				t.Errorf("WatchedDeposits(since %v, %d) = %s, %v; want %s", c.since, c.limit, depositIDs(watched), err, c.want)
			}
		}
		if got, _ := tx.Funds.Deposit(ctx, "d1"); !got.CheckedAt.Equal(t0.Add(time.Hour)) || got.ScannedUntil != "sig-d1" {
			t.Errorf("d1 checked at %v, until %q", got.CheckedAt, got.ScannedUntil)
		}
		return nil
	})

	// Two payments, each short of the amount, credit d2 in full together.
	p1 := crtx.DepositPayment{Signature: "sig1", DepositID: "d2", Environment: crtx.Devnet, Amount: 2_000_000, Slot: 1 << 40,
		TxID: "tx1", CreditedAt: t0.Add(time.Hour)}
	p2 := crtx.DepositPayment{Signature: "sig2", DepositID: "d2", Environment: crtx.Devnet, Amount: 3_000_000, Slot: 7,
		TxID: "tx2", CreditedAt: t0.Add(2 * time.Hour)}
	credited := func(id string) crtx.Deposit {
		var d crtx.Deposit
		view(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
			d, err = tx.Funds.Deposit(ctx, id)
			return err
		})
		return d
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.CreditDeposit(ctx, p1) })
	if d := credited("d2"); d.Credited != 2_000_000 || d.Status != crtx.DepositAwaitingPayment {
		t.Errorf("after a partial payment d2 = %+v", d)
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.CreditDeposit(ctx, p2) })
	if d := credited("d2"); d.Credited != 5_000_000 || d.Status != crtx.DepositCredited {
		t.Errorf("after the whole amount d2 = %+v", d)
	}

	// A signature is credited once in the whole store, to whichever deposit.
	for _, dup := range []crtx.DepositPayment{p1, {Signature: "sig2", DepositID: "d1", Environment: crtx.Devnet, Amount: 9, TxID: "tx9", CreditedAt: t0}} {
		err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Funds.CreditDeposit(context.Background(), dup) })
		if !errors.Is(err, crtx.ErrConflict) {
			t.Errorf("crediting %s again to %s: %v, want ErrConflict", dup.Signature, dup.DepositID, err)
		}
	}
	// Nor does a refused credit leave part of itself behind in a
	// transaction that goes on and commits.
	p3 := crtx.DepositPayment{Signature: "sig3", DepositID: "d1", Environment: crtx.Devnet, Amount: 1_000_000, TxID: "tx3",
		CreditedAt: t0.Add(3 * time.Hour)}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Funds.CreditDeposit(ctx, crtx.DepositPayment{Signature: "sig1", DepositID: "d1", Environment: crtx.Devnet,
			Amount: 4_000_000, TxID: "tx8", CreditedAt: t0}); !errors.Is(err, crtx.ErrConflict) {
			t.Errorf("crediting sig1 again: %v, want ErrConflict", err)
		}
		return tx.Funds.CreditDeposit(ctx, p3)
	})
	if d := credited("d1"); d.Credited != 1_000_000 || d.Status != crtx.DepositAwaitingPayment {
		t.Errorf("d1 after one credit and a refused one = %+v", d)
	}
	if d := credited("d2"); d.Credited != 5_000_000 {
		t.Errorf("d2 after its payments were offered again = %+v", d)
	}
	// A credit in a transaction rolled back leaves nothing.
	boom := errors.New("boom")
	err = s.Update(context.Background(), func(tx crtx.Tx) error {
		if err := tx.Funds.CreditDeposit(context.Background(), crtx.DepositPayment{Signature: "sig4", DepositID: "d1",
			Environment: crtx.Devnet, Amount: 4_000_000, TxID: "tx4", CreditedAt: t0}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want the callback's error", err)
	}
	// An unknown deposit, or one of another environment, is credited nothing.
	for _, p := range []crtx.DepositPayment{
		{Signature: "sig5", DepositID: "none", Environment: crtx.Devnet, Amount: 1, TxID: "tx5", CreditedAt: t0},
		{Signature: "sig6", DepositID: "d1", Environment: crtx.Mainnet, Amount: 1, TxID: "tx6", CreditedAt: t0},
	} {
		err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Funds.CreditDeposit(context.Background(), p) })
		if !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("crediting %s of %s: %v, want ErrNotFound", p.DepositID, p.Environment, err)
		}
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if d, _ := tx.Funds.Deposit(ctx, "d1"); d.Credited != 1_000_000 {
			t.Errorf("d1 after a rolled-back credit = %+v", d)
		}
		for _, sig := range []string{"sig4", "sig5", "sig6", "none"} {
			if _, err := tx.Funds.DepositPayment(ctx, sig, 0); !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("DepositPayment(%s): %v, want ErrNotFound", sig, err)
			}
		}
		if got, err := tx.Funds.DepositPayment(ctx, "sig1", 0); err != nil || got != p1 {
			t.Errorf("DepositPayment(sig1) = %+v, %v; want %+v", got, err, p1)
		}
		pays, err := tx.Funds.DepositPayments(ctx, "d2")
		if err != nil || !slices.Equal(pays, []crtx.DepositPayment{p1, p2}) {
			t.Errorf("DepositPayments(d2) = %+v, %v; want p1, p2", pays, err)
		}
		if pays, err := tx.Funds.DepositPayments(ctx, "d4"); err != nil || pays == nil || len(pays) != 0 {
			t.Errorf("DepositPayments(d4) = %#v, %v; want none", pays, err)
		}
		// Credited in full, d2 is still watched: a later transfer naming
		// its reference is credited too.
		watched, err := tx.Funds.WatchedDeposits(ctx, crtx.Devnet, t0, 10, 10)
		if err != nil || depositIDs(watched) != "[d2 d4 d1]" {
			t.Errorf("WatchedDeposits after d2's credit = %s, %v; want [d2 d4 d1]", depositIDs(watched), err)
		}
		return nil
	})

	// Paying more than asked is credited in full.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Funds.CreditDeposit(ctx, crtx.DepositPayment{Signature: "sig7", DepositID: "d4", Environment: crtx.Devnet,
			Amount: 1_500_000, TxID: "tx7", CreditedAt: t0})
	})
	if d := credited("d4"); d.Credited != 1_500_000 || d.Status != crtx.DepositCredited {
		t.Errorf("d4 after an overpayment = %+v", d)
	}

	// One transaction pays two deposits, a part each; a part is credited
	// once, and never beside the whole of its transaction.
	part := func(sig string, part int, dep string) error {
		return s.Update(context.Background(), func(tx crtx.Tx) error {
			return tx.Funds.CreditDeposit(context.Background(), crtx.DepositPayment{Signature: sig, Part: part, DepositID: dep,
				Environment: crtx.Devnet, Amount: 100, TxID: fmt.Sprintf("tx-%s-%d", sig, part), CreditedAt: t0})
		})
	}
	for _, c := range []struct {
		sig  string
		part int
		dep  string
		want error
	}{
		{"sig8", 1, "d1", nil},
		{"sig8", 2, "d4", nil},
		{"sig8", 2, "d1", crtx.ErrConflict},
		{"sig8", 0, "d1", crtx.ErrConflict},
		{"sig7", 1, "d1", crtx.ErrConflict},
	} {
		if err := part(c.sig, c.part, c.dep); !errors.Is(err, c.want) && err != c.want {
			t.Errorf("crediting %s part %d to %s: %v, want %v", c.sig, c.part, c.dep, err, c.want)
		}
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if got, err := tx.Funds.DepositPayment(ctx, "sig8", 2); err != nil || got.DepositID != "d4" || got.Part != 2 {
			t.Errorf("DepositPayment(sig8, 2) = %+v, %v", got, err)
		}
		if got, err := tx.Funds.DepositPayment(ctx, "sig7", 3); err != nil || got.Part != 0 {
			t.Errorf("DepositPayment(sig7, 3) = %+v, %v; want the whole", got, err)
		}
		if _, err := tx.Funds.DepositPayment(ctx, "sig8", 3); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("DepositPayment(sig8, 3): %v, want ErrNotFound", err)
		}
		return nil
	})
	if d := credited("d1"); d.Credited != 1_000_100 {
		t.Errorf("d1 after its part = %+v", d)
	}
}

func withdrawal(id string, env crtx.Environment, at time.Time) crtx.Withdrawal {
	return crtx.Withdrawal{ID: id, Wallet: "alice", Environment: env, Amount: 1_000_000, Destination: "ata-alice",
		Status: crtx.WithdrawalPending, CreatedAt: at}
}

func withdrawalIDs(ws []crtx.Withdrawal) string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return fmt.Sprint(ids)
}

func testWithdrawals(t *testing.T, s crtx.Store) {
	w1 := withdrawal("w1", crtx.Devnet, t0)
	w2 := withdrawal("w2", crtx.Devnet, t0.Add(time.Minute))
	done := t0.Add(3 * time.Minute)
	w3 := withdrawal("w3", crtx.Devnet, t0.Add(2*time.Minute))
	w3.Status, w3.Signature, w3.Slot, w3.CompletedAt = crtx.WithdrawalConfirmed, "sig-w3", 99, &done
	w4 := withdrawal("w4", crtx.Mainnet, t0.Add(3*time.Minute))
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, w := range []crtx.Withdrawal{w1, w2, w3, w4} {
			if err := tx.Funds.InsertWithdrawal(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
	read := func(id string) crtx.Withdrawal {
		var w crtx.Withdrawal
		view(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
			w, err = tx.Funds.Withdrawal(ctx, id)
			return err
		})
		return w
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, want := range []crtx.Withdrawal{w1, w3} {
			if got, err := tx.Funds.Withdrawal(ctx, want.ID); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("Withdrawal(%s) = %+v, %v; want %+v", want.ID, got, err, want)
			}
		}
		if _, err := tx.Funds.Withdrawal(ctx, "none"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("Withdrawal(unknown): %v, want ErrNotFound", err)
		}
		list, total, err := tx.Funds.Withdrawals(ctx, "alice", crtx.Devnet, 10, 0)
		if err != nil || total != 3 || withdrawalIDs(list) != "[w3 w2 w1]" {
			t.Errorf("Withdrawals = %s, %d, %v; want [w3 w2 w1], 3", withdrawalIDs(list), total, err)
		}
		list, total, err = tx.Funds.Withdrawals(ctx, "alice", crtx.Devnet, 1, 1)
		if err != nil || total != 3 || withdrawalIDs(list) != "[w2]" {
			t.Errorf("Withdrawals' second page = %s, %d, %v; want [w2], 3", withdrawalIDs(list), total, err)
		}
		return nil
	})

	claim := func(owner string, now, until time.Time, limit int) (got []crtx.Withdrawal) {
		t.Helper()
		update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
			got, err = tx.Funds.ClaimWithdrawals(ctx, owner, now, until, limit)
			return err
		})
		return got
	}
	// Only withdrawals not final, whose lease ran out, once each.
	now, until := t0.Add(time.Hour), t0.Add(time.Hour+time.Minute)
	if got := claim("r1", now, until, 1); withdrawalIDs(got) != "[w1]" || got[0].LeaseOwner != "r1" ||
		!got[0].LeaseUntil.Equal(until) || got[0].Attempts != 1 {
		t.Fatalf("r1 claimed %+v, want w1 leased to r1", got)
	}
	if got := claim("r2", now, until, 10); withdrawalIDs(got) != "[w2 w4]" {
		t.Errorf("r2 claimed %s, want [w2 w4]", withdrawalIDs(got))
	}
	if got := claim("r3", now, until, 10); len(got) != 0 {
		t.Errorf("r3 claimed %s, leased already", withdrawalIDs(got))
	}
	if got := read("w1"); got.LeaseOwner != "r1" || got.Attempts != 1 || !got.LeaseUntil.Equal(until) {
		t.Errorf("w1 after its claim = %+v", got)
	}

	// Only the lease's owner writes; the signed bytes come back exactly.
	sent := read("w1")
	sent.Status, sent.Signature, sent.NonceAccount, sent.Nonce = crtx.WithdrawalSent, "sig-w1", "nonce-1", "value-1"
	sent.Raw = []byte{0, 1, 2, 0xff, 0, 0x80, 0x7f, 0}
	refused := func(w crtx.Withdrawal, owner string, want error) {
		t.Helper()
		err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Funds.UpdateWithdrawal(context.Background(), w, owner) })
		if !errors.Is(err, want) {
			t.Errorf("UpdateWithdrawal(%s) by %s: %v, want %v", w.ID, owner, err, want)
		}
	}
	refused(sent, "r2", crtx.ErrConflict)
	refused(withdrawal("none", crtx.Devnet, t0), "r1", crtx.ErrNotFound)
	if got := read("w1"); got.Status != crtx.WithdrawalPending || got.Raw != nil {
		t.Errorf("w1 after a refused update = %+v", got)
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.UpdateWithdrawal(ctx, sent, "r1") })
	if got := read("w1"); !reflect.DeepEqual(got, sent) {
		t.Errorf("w1 after its update = %+v, want %+v", got, sent)
	}

	// A lease run out is claimed again, by another, and counted.
	later, until2 := until.Add(time.Second), t0.Add(2*time.Hour)
	got := claim("r2", later, until2, 10)
	if withdrawalIDs(got) != "[w1 w2 w4]" {
		t.Fatalf("after the leases ran out r2 claimed %s, want [w1 w2 w4]", withdrawalIDs(got))
	}
	if got[0].Attempts != 2 || got[0].LeaseOwner != "r2" || got[0].Status != crtx.WithdrawalSent || !slices.Equal(got[0].Raw, sent.Raw) {
		t.Errorf("w1 claimed again = %+v", got[0])
	}
	refused(sent, "r1", crtx.ErrConflict)
	// No two withdrawals carry one signature: one payment would confirm both.
	twin := got[1]
	twin.Signature = "sig-w1"
	refused(twin, "r2", crtx.ErrConflict)
	// Nor two not final one nonce account: only one of their transfers
	// could land. Another environment's account of that name is another.
	twin.Signature, twin.NonceAccount, twin.Nonce = "sig-w2", "nonce-1", "value-1"
	refused(twin, "r2", crtx.ErrConflict)
	held := func(env crtx.Environment) []string {
		t.Helper()
		out, err := crtx.Read(context.Background(), s, func(tx crtx.Tx) ([]string, error) { return tx.Funds.HeldNonceAccounts(context.Background(), env) })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	nonceSlot := func(account string) uint64 {
		t.Helper()
		out, err := crtx.Read(context.Background(), s, func(tx crtx.Tx) (uint64, error) {
			return tx.Funds.NonceSlot(context.Background(), crtx.Devnet, account)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := held(crtx.Devnet); !slices.Equal(got, []string{"nonce-1"}) {
		t.Errorf("held nonce accounts %v, want [nonce-1]", got)
	}
	if got := held(crtx.Mainnet); len(got) != 0 {
		t.Errorf("mainnet's held nonce accounts %v, want none", got)
	}
	if got := nonceSlot("nonce-1"); got != 0 {
		t.Errorf("the slot of nonce-1 before anything landed: %d", got)
	}
	confirmed := got[0]
	confirmed.Status, confirmed.Slot, confirmed.CompletedAt = crtx.WithdrawalConfirmed, 1<<41, &later
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.UpdateWithdrawal(ctx, confirmed, "r2") })
	if got := read("w1"); !reflect.DeepEqual(got, confirmed) {
		t.Errorf("w1 confirmed = %+v, want %+v", got, confirmed)
	}
	if got := held(crtx.Devnet); len(got) != 0 {
		t.Errorf("held nonce accounts once w1 is final: %v", got)
	}
	if got := nonceSlot("nonce-1"); got != 1<<41 {
		t.Errorf("the slot of nonce-1 = %d, want w1's %d", got, uint64(1<<41))
	}
	// Final, w1 lets the account go to the next.
	twin.Nonce = "value-2"
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.UpdateWithdrawal(ctx, twin, "r2") })
	if got := claim("r3", t0.Add(24*time.Hour), t0.Add(25*time.Hour), 10); withdrawalIDs(got) != "[w2 w4]" {
		t.Errorf("after w1's confirmation r3 claimed %s, want [w2 w4]", withdrawalIDs(got))
	}

	// Claimers at once never take the same withdrawal.
	var ids []string
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for i := range 24 {
			w := withdrawal(fmt.Sprintf("c%02d", i), crtx.Devnet, t0.Add(time.Duration(i)*time.Second))
			ids = append(ids, w.ID)
			if err := tx.Funds.InsertWithdrawal(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
	now, until = t0.Add(2*time.Hour), t0.Add(100*time.Hour)
	var mu sync.Mutex
	owners := map[string][]string{}
	var wg sync.WaitGroup
	for _, owner := range []string{"a", "b", "c"} {
		wg.Go(func() {
			for {
				var got []crtx.Withdrawal
				err := s.Update(context.Background(), func(tx crtx.Tx) (err error) {
					got, err = tx.Funds.ClaimWithdrawals(context.Background(), owner, now, until, 3)
					return err
				})
				if err != nil {
					t.Errorf("%s claims: %v", owner, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, w := range got {
					owners[w.ID] = append(owners[w.ID], owner)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if len(owners[id]) != 1 {
			t.Errorf("%s claimed by %v, want one claimer", id, owners[id])
		}
	}
	if len(owners) != len(ids) {
		t.Errorf("claimed %d withdrawals, want the %d new ones", len(owners), len(ids))
	}
}

func testAnchors(t *testing.T, s crtx.Store) {
	block := func(env crtx.Environment, height int64) crtx.Block {
		return crtx.Block{Environment: env, Height: height, PrevHash: fmt.Sprintf("prev-%d", height), MerkleRoot: "root",
			SealedAt: t0.Add(time.Duration(height) * time.Minute), Hash: fmt.Sprintf("hash-%d", height), Signature: "sig", Version: 2}
	}
	a1 := crtx.Anchor{Signature: "anchor-1", Slot: 1 << 40, Cluster: "devnet"}
	a2 := crtx.Anchor{Signature: "anchor-2", Slot: 1<<40 + 5, Cluster: "devnet"}
	b1, b2, b3 := block(crtx.Devnet, 1), block(crtx.Devnet, 2), block(crtx.Devnet, 3)
	// A block may be written with its anchor.
	m1 := block(crtx.Mainnet, 1)
	m1.Anchor = &crtx.Anchor{Signature: "anchor-m1", Slot: 3, Cluster: "mainnet-beta"}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, b := range []crtx.Block{b1, b2, b3, m1} {
			if err := tx.Ledger.InsertBlock(ctx, b, nil); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Ledger.LastAnchoredBlock(ctx, crtx.Devnet); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("LastAnchoredBlock before any anchor: %v, want ErrNotFound", err)
		}
		if b, err := tx.Ledger.Block(ctx, crtx.Devnet, 1); err != nil || b != b1 || b.Anchor != nil {
			t.Errorf("Block(1) = %+v, %v; want %+v", b, err, b1)
		}
		if b, err := tx.Ledger.LastAnchoredBlock(ctx, crtx.Mainnet); err != nil || b.Anchor == nil || *b.Anchor != *m1.Anchor {
			t.Errorf("mainnet's LastAnchoredBlock = %+v, %v; want the block written with its anchor", b, err)
		}
		return nil
	})

	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Ledger.SetBlockAnchor(ctx, crtx.Devnet, 2, a2) })
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Ledger.SetBlockAnchor(ctx, crtx.Devnet, 1, a1) })
	// The same anchor again changes nothing; another is refused.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Ledger.SetBlockAnchor(ctx, crtx.Devnet, 2, a2) })
	for _, c := range []struct {
		height int64
		a      crtx.Anchor
		want   error
	}{
		{2, a1, crtx.ErrConflict},
		{2, crtx.Anchor{Signature: "anchor-2", Slot: 1, Cluster: "devnet"}, crtx.ErrConflict},
		{9, a1, crtx.ErrNotFound},
	} {
		err := s.Update(context.Background(), func(tx crtx.Tx) error {
			return tx.Ledger.SetBlockAnchor(context.Background(), crtx.Devnet, c.height, c.a)
		})
		if !errors.Is(err, c.want) {
			t.Errorf("SetBlockAnchor(%d, %+v): %v, want %v", c.height, c.a, err, c.want)
		}
	}

	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		want := b2
		want.Anchor = &a2
		for name, read := range map[string]func() (crtx.Block, error){
			"Block(2)":          func() (crtx.Block, error) { return tx.Ledger.Block(ctx, crtx.Devnet, 2) },
			"LastAnchoredBlock": func() (crtx.Block, error) { return tx.Ledger.LastAnchoredBlock(ctx, crtx.Devnet) },
		} {
			if got, err := read(); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %+v, %v; want %+v with %+v", name, got, err, want, a2)
			}
		}
		if got, err := tx.Ledger.Block(ctx, crtx.Devnet, 1); err != nil || got.Anchor == nil || *got.Anchor != a1 {
			t.Errorf("Block(1) = %+v, %v; want anchored by %+v", got, err, a1)
		}
		if got, err := tx.Ledger.LastBlock(ctx, crtx.Devnet); err != nil || got != b3 || got.Anchor != nil {
			t.Errorf("LastBlock = %+v, %v; want %+v unanchored", got, err, b3)
		}
		if got, err := tx.Ledger.LastAnchoredBlock(ctx, crtx.Mainnet); err != nil || got.Height != 1 || *got.Anchor != *m1.Anchor {
			t.Errorf("mainnet's LastAnchoredBlock = %+v, %v", got, err)
		}
		return nil
	})
}
