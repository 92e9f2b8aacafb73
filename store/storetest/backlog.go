package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testBacklog: the work waiting, as /metrics reads it: executions pending
// or running by environment with what they hold, withdrawals not final,
// and deliveries not made within the retry window (a push only once its
// task ended), each with its oldest.
func testBacklog(t *testing.T, s crtx.Store) {
	done := t0.Add(5 * time.Minute)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		for i, st := range []crtx.ExecStatus{crtx.ExecPending, crtx.ExecRunning, crtx.ExecCompleted} {
			e := execution(fmt.Sprintf("b%d", i), t0.Add(time.Duration(i)*time.Minute))
			e.Status = st
			if st.Final() {
				e.CompletedAt = &done
			}
			if err := tx.Executions.InsertExecution(ctx, e); err != nil {
				return err
			}
		}
		m := execution("bm", t0.Add(3*time.Minute))
		m.Environment = crtx.Mainnet
		if err := tx.Executions.InsertExecution(ctx, m); err != nil {
			return err
		}
		for i, st := range []crtx.WithdrawalStatus{crtx.WithdrawalPending, crtx.WithdrawalSent, crtx.WithdrawalConfirmed} {
			w := withdrawal(fmt.Sprintf("wd%d", i), crtx.Devnet, t0.Add(time.Duration(i)*time.Minute))
			w.Status = st
			if err := tx.Funds.InsertWithdrawal(ctx, w); err != nil {
				return err
			}
		}
		for _, w := range []crtx.Webhook{
			{ExecutionID: "b2", URL: "https://h/new", NextAt: done, CreatedAt: done},
			{ExecutionID: "b1", URL: "https://h/given-up", NextAt: t0, CreatedAt: t0.Add(-2 * time.Hour)},
			{ExecutionID: "bm", URL: "https://h/delivered", NextAt: t0, CreatedAt: t0},
		} {
			if err := tx.Deliveries.InsertWebhook(ctx, w); err != nil {
				return err
			}
		}
		delivered := crtx.Webhook{ExecutionID: "bm", URL: "https://h/delivered", Attempts: 1, NextAt: t0, CreatedAt: t0, DeliveredAt: &done}
		if err := tx.Deliveries.UpdateWebhook(ctx, delivered); err != nil {
			return err
		}
		for _, task := range []string{"b2", "b0"} { // ended, and not yet
			if err := tx.Deliveries.PutPushConfig(ctx, crtx.PushConfig{TaskID: task, ID: "p", Wallet: "w1", URL: "https://h/push", CreatedAt: t0, NextAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		b, err := tx.System.Backlog(ctx, t0.Add(-time.Hour))
		if err != nil {
			return err
		}
		want := crtx.Backlog{
			Executions:  map[crtx.Environment]crtx.Queue{crtx.Devnet: {Waiting: 2, Amount: 200_000, Oldest: t0}, crtx.Mainnet: {Waiting: 1, Amount: 100_000, Oldest: t0.Add(3 * time.Minute)}},
			Withdrawals: map[crtx.Environment]crtx.Queue{crtx.Devnet: {Waiting: 2, Amount: 2_000_000, Oldest: t0}},
			Webhooks:    crtx.Queue{Waiting: 1, Oldest: done},
			Pushes:      crtx.Queue{Waiting: 1, Oldest: done},
		}
		if fmt.Sprint(b) != fmt.Sprint(want) {
			t.Errorf("Backlog =\n%+v, want\n%+v", b, want)
		}
		return nil
	})
}
