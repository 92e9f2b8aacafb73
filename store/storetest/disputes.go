package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func testDisputes(t *testing.T, s crtx.Store) {
	d := crtx.Dispute{ID: "d1", ExecutionID: "e1", Environment: crtx.Devnet, Wallet: "w1", AgentID: "a1", Creator: "w1",
		Reason: "fraud", Description: "wrong", Evidence: json.RawMessage(`{"a":1}`), EvidenceHash: "sha256:x", Status: "open",
		OpenedAt: t0, RespondBy: t0.Add(72 * time.Hour)}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		tx.Catalog.EnsureCreator(ctx, "w1", t0)
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		for _, id := range []string{"e1", "e2"} {
			if err := tx.Executions.InsertExecution(ctx, execution(id, t0)); err != nil {
				return err
			}
		}
		return tx.Disputes.InsertDispute(ctx, d)
	})
	if err := s.Update(context.Background(), func(tx crtx.Tx) error {
		d2 := d
		d2.ID = "d2"
		return tx.Disputes.InsertDispute(context.Background(), d2)
	}); !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a second dispute of e1: %v, want ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Disputes.DisputeByExecution(ctx, "e1")
		if err != nil || got.ID != "d1" || string(got.Evidence) != `{"a":1}` || !got.RespondBy.Equal(d.RespondBy) {
			t.Errorf("DisputeByExecution = %+v, %v", got, err)
		}
		if _, err := tx.Disputes.DisputeByExecution(ctx, "e2"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("undisputed execution: %v", err)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Status: "open"}); len(l) != 1 {
			t.Errorf("open list = %v", l)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		at := t0.Add(time.Hour)
		d.Status, d.ResolvedAt, d.Slashed, d.Refunded, d.Response, d.RespondedAt = "upheld", &at, 500, 100, "sorry", &at
		return tx.Disputes.UpdateDispute(ctx, d)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, _ := tx.Disputes.Dispute(ctx, "d1")
		if got.Status != "upheld" || got.Slashed != 500 || got.Refunded != 100 || got.Response != "sorry" || got.ResolvedAt == nil {
			t.Errorf("updated dispute = %+v", got)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Status: "upheld"}); len(l) != 1 {
			t.Errorf("upheld list = %v", l)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Resolved: true}); len(l) != 1 || l[0].ID != "d1" {
			t.Errorf("resolved list = %v", l)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Status: "open"}); len(l) != 0 {
			t.Errorf("open list after resolving = %v", l)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Creator: "w2"}); len(l) != 0 {
			t.Errorf("another creator's list = %v", l)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Wallet: "w1"}); len(l) != 1 || l[0].ID != "d1" || l[0].Cost != 100_000 {
			t.Errorf("the wallet's own list = %+v; want d1, with its execution's cost", l)
		}
		if l, _ := tx.Disputes.ListDisputes(ctx, crtx.DisputeQuery{Wallet: "w2"}); len(l) != 0 {
			t.Errorf("another wallet's list = %v", l)
		}
		if _, err := tx.Disputes.Dispute(ctx, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown dispute: %v", err)
		}
		// What the wallet spent leaves out what the upheld dispute refunded.
		spent, err := tx.Executions.WalletSpending(ctx, "w1", crtx.Devnet, t0.Truncate(24*time.Hour))
		if err != nil || len(spent) != 1 || spent[0].Spent != 200_000-100 || spent[0].Calls != 2 {
			t.Errorf("WalletSpending after a dispute's refund = %+v, %v", spent, err)
		}
		return nil
	})
}

// The release job's query leaves out every listing something holds, so
// that more held listings than one batch never hide a due one behind
// them; only mainnet, where collateral is, holds it.
func testReleasableCollateral(t *testing.T, s crtx.Store) {
	cutoff := t0.Add(100 * time.Hour)
	issuance, _, _ := accounts(crtx.Mainnet)
	n := 0
	// list adds a delisted agent, delisted at (the held ones first), with
	// collateral unless empty, an execution in env that ended at ended (in
	// flight if nil), and a dispute of it in status ("" for none).
	list := func(ctx context.Context, tx crtx.Tx, id string, at time.Time, empty bool, env crtx.Environment, ended *time.Time, status string) error {
		a := agent(id, "w1", 100_000, []string{"data"}, t0)
		a.Status, a.DelistedAt = crtx.AgentDelisted, &at
		if err := tx.Catalog.InsertAgent(ctx, a); err != nil {
			return err
		}
		e := execution("e-"+id, t0)
		e.AgentID, e.Environment, e.Status, e.CompletedAt = id, env, crtx.ExecCompleted, ended
		if ended == nil {
			e.Status = crtx.ExecRunning
		}
		if err := tx.Executions.InsertExecution(ctx, e); err != nil {
			return err
		}
		if status != "" {
			if err := tx.Disputes.InsertDispute(ctx, crtx.Dispute{ID: "d-" + id, ExecutionID: e.ID, Environment: env, Wallet: "w1", AgentID: id,
				Creator: "w1", Reason: "fraud", Description: "wrong", Evidence: json.RawMessage(`{}`), EvidenceHash: "sha256:x",
				Status: status, OpenedAt: t0, RespondBy: t0.Add(72 * time.Hour)}); err != nil {
				return err
			}
		}
		if empty {
			return nil
		}
		n++
		coll := crtx.NewAccount(crtx.Mainnet, crtx.AccountCollateral, id, "w1")
		coll.CreatedAt = t0
		_, err := insert(ctx, tx, crtx.Mainnet, fmt.Sprintf("lock-%d", n), crtx.TxCollateralLocked, t0, nil,
			[]crtx.Account{issuance, coll}, crtx.Posting{From: issuance.Address, To: coll.Address, Amount: 10})
		return err
	}
	ptr := func(at time.Time) *time.Time { return &at }
	ended, later := ptr(t0.Add(time.Hour)), t0.Add(time.Hour)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		// More listings held by an open mainnet dispute than one read returns.
		for i := range 12 {
			if err := list(ctx, tx, fmt.Sprintf("held-%02d", i), t0, false, crtx.Mainnet, ended, "open"); err != nil {
				return err
			}
		}
		return errors.Join(
			list(ctx, tx, "recent", t0, false, crtx.Mainnet, ptr(cutoff.Add(time.Second)), ""),
			list(ctx, tx, "in-flight", t0, false, crtx.Mainnet, nil, ""),
			list(ctx, tx, "late", cutoff.Add(time.Second), false, crtx.Mainnet, ended, ""),
			list(ctx, tx, "no-collateral", t0, true, crtx.Mainnet, ended, ""),
			// Due: a devnet dispute open and a devnet execution just now
			// (devnet cannot slash), and a mainnet dispute resolved.
			list(ctx, tx, "devnet", later, false, crtx.Devnet, ptr(cutoff.Add(time.Second)), "open"),
			list(ctx, tx, "resolved", later, false, crtx.Mainnet, ended, "upheld"),
			list(ctx, tx, "on-time", later, false, crtx.Mainnet, ptr(cutoff), ""),
		)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		l, err := tx.Catalog.ReleasableCollateral(ctx, cutoff, 5)
		var ids []string
		for _, a := range l {
			ids = append(ids, a.ID)
		}
		if err != nil || strings.Join(ids, " ") != "devnet on-time resolved" || l[0].DelistedAt == nil {
			t.Errorf("ReleasableCollateral = %v, %v; want devnet on-time resolved", ids, err)
		}
		if l, err := tx.Catalog.ReleasableCollateral(ctx, cutoff, 2); err != nil || len(l) != 2 {
			t.Errorf("ReleasableCollateral with limit 2 = %d, %v", len(l), err)
		}
		return nil
	})
}
