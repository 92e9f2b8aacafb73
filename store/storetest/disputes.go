package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func testDisputes(t *testing.T, s crtx.Store) {
	d := crtx.Dispute{ID: "d1", ExecutionID: "e1", Environment: crtx.Devnet, Wallet: "w1", AgentID: "a1", Creator: "w1",
		Reason: "fraud", Description: "wrong", Evidence: json.RawMessage(`{"a":1}`), EvidenceHash: "sha256:x", Status: "open",
		OpenedAt: t0, RespondBy: t0.Add(72 * time.Hour)}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		tx.EnsureCreator(ctx, "w1", t0)
		if err := tx.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		for _, id := range []string{"e1", "e2"} {
			if err := tx.InsertExecution(ctx, execution(id, t0)); err != nil {
				return err
			}
		}
		return tx.InsertDispute(ctx, d)
	})
	if err := s.Update(context.Background(), func(tx crtx.Tx) error {
		d2 := d
		d2.ID = "d2"
		return tx.InsertDispute(context.Background(), d2)
	}); !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a second dispute of e1: %v, want ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.DisputeByExecution(ctx, "e1")
		if err != nil || got.ID != "d1" || string(got.Evidence) != `{"a":1}` || !got.RespondBy.Equal(d.RespondBy) {
			t.Errorf("DisputeByExecution = %+v, %v", got, err)
		}
		if _, err := tx.DisputeByExecution(ctx, "e2"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("undisputed execution: %v", err)
		}
		if n, _ := tx.OpenDisputes(ctx, "a1"); n != 1 {
			t.Errorf("open disputes = %d", n)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		at := t0.Add(time.Hour)
		d.Status, d.ResolvedAt, d.Slashed, d.Refunded, d.Response, d.RespondedAt = "upheld", &at, 500, 100, "sorry", &at
		return tx.UpdateDispute(ctx, d)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, _ := tx.Dispute(ctx, "d1")
		if got.Status != "upheld" || got.Slashed != 500 || got.Refunded != 100 || got.Response != "sorry" || got.ResolvedAt == nil {
			t.Errorf("updated dispute = %+v", got)
		}
		if n, _ := tx.OpenDisputes(ctx, "a1"); n != 0 {
			t.Errorf("open disputes after resolving = %d", n)
		}
		if l, _ := tx.ListDisputes(ctx, crtx.DisputeQuery{Status: "upheld"}); len(l) != 1 {
			t.Errorf("upheld list = %v", l)
		}
		if l, _ := tx.ListDisputes(ctx, crtx.DisputeQuery{Resolved: true}); len(l) != 1 || l[0].ID != "d1" {
			t.Errorf("resolved list = %v", l)
		}
		if l, _ := tx.ListDisputes(ctx, crtx.DisputeQuery{Status: "open"}); len(l) != 0 {
			t.Errorf("open list after resolving = %v", l)
		}
		if l, _ := tx.ListDisputes(ctx, crtx.DisputeQuery{Creator: "w2"}); len(l) != 0 {
			t.Errorf("another creator's list = %v", l)
		}
		if _, err := tx.Dispute(ctx, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown dispute: %v", err)
		}
		return nil
	})
	// Collateral release queries.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		a, _ := tx.Agent(ctx, "a1")
		at := t0.Add(time.Hour)
		a.Status, a.DelistedAt = crtx.AgentDelisted, &at
		if err := tx.UpdateAgent(ctx, a); err != nil {
			return err
		}
		e, _ := tx.Execution(ctx, "e2")
		done := t0.Add(2 * time.Hour)
		e.Status, e.CompletedAt = crtx.ExecCompleted, &done
		return tx.UpdateExecution(ctx, e)
	})
	issuance, _, _ := accounts(crtx.Mainnet)
	coll := crtx.NewAccount(crtx.Mainnet, crtx.AccountCollateral, "a1", "w1")
	coll.CreatedAt = t0
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if l, _ := tx.DelistedWithCollateral(ctx, 10); len(l) != 0 {
			t.Errorf("listed without any collateral: %v", l)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		_, err := insert(ctx, tx, crtx.Mainnet, "lock", crtx.TxCollateralLocked, t0, nil, []crtx.Account{issuance, coll}, crtx.Posting{From: issuance.Address, To: coll.Address, Amount: 10})
		return err
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		l, err := tx.DelistedWithCollateral(ctx, 10)
		if err != nil || len(l) != 1 || l[0].ID != "a1" || l[0].DelistedAt == nil {
			t.Errorf("DelistedWithCollateral = %v, %v", l, err)
		}
		last, err := tx.LastCompletion(ctx, "a1")
		if err != nil || last == nil || !last.Equal(t0.Add(2*time.Hour)) {
			t.Errorf("LastCompletion = %v, %v", last, err)
		}
		return nil
	})
}
