package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testPushConfigs: configs are kept per task and id, replaced by id, and
// claimed for delivery only once their task has ended.
func testPushConfigs(t *testing.T, s crtx.Store) {
	cfg := func(task, id, url string) crtx.PushConfig {
		return crtx.PushConfig{TaskID: task, ID: id, Wallet: "w1", URL: url, Token: "tok-" + id, AuthScheme: "Bearer",
			AuthCredentials: "cred", CreatedAt: t0, NextAt: t0}
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		tx.Catalog.EnsureCreator(ctx, "w1", t0)
		tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0))
		for _, id := range []string{"e1", "e2"} {
			if err := tx.Executions.InsertExecution(ctx, execution(id, t0)); err != nil {
				return err
			}
		}
		for _, p := range []crtx.PushConfig{cfg("e1", "a", "https://h/a"), cfg("e1", "b", "https://h/b"), cfg("e2", "a", "https://h/2")} {
			if err := tx.Deliveries.PutPushConfig(ctx, p); err != nil {
				return err
			}
		}
		return tx.Deliveries.PutPushConfig(ctx, cfg("e1", "a", "https://h/a2"))
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		all, err := tx.Deliveries.PushConfigs(ctx, "e1")
		if err != nil || len(all) != 2 || all[0].ID != "a" || all[0].URL != "https://h/a2" || all[1].Token != "tok-b" || all[1].AuthCredentials != "cred" {
			t.Errorf("PushConfigs(e1) = %+v, %v", all, err)
		}
		if _, err := tx.Deliveries.PushConfig(ctx, "e2", "b"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("another task's config found: %v", err)
		}
		return nil
	})
	claim := func(at time.Time) (due []crtx.PushConfig) {
		update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
			due, err = tx.Deliveries.ClaimPushes(ctx, at, at.Add(time.Minute), t0.Add(-time.Hour), 10)
			return err
		})
		return due
	}
	if due := claim(t0.Add(time.Second)); len(due) != 0 {
		t.Fatalf("configs of running tasks were claimed: %+v", due)
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e := execution("e1", t0)
		e.Status = crtx.ExecCompleted
		return tx.Executions.UpdateExecution(ctx, e)
	})
	due := claim(t0.Add(time.Second))
	if len(due) != 2 || due[0].TaskID != "e1" || due[0].Attempts != 1 || !due[0].NextAt.Equal(t0.Add(time.Second+time.Minute)) {
		t.Fatalf("claimed %+v; want e1's two configs", due)
	}
	if again := claim(t0.Add(2 * time.Second)); len(again) != 0 {
		t.Errorf("claimed twice within the claim: %+v", again)
	}
	delivered := t0.Add(3 * time.Second)
	due[0].DeliveredAt = &delivered
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Deliveries.UpdatePush(ctx, due[0]); err != nil {
			return err
		}
		if err := tx.Deliveries.DeletePushConfig(ctx, "e1", "b"); err != nil {
			return err
		}
		if err := tx.Deliveries.DeletePushConfig(ctx, "e1", "b"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("a second delete: %v", err)
		}
		return nil
	})
	if again := claim(t0.Add(time.Hour)); len(again) != 0 {
		t.Errorf("a delivered or deleted config was claimed: %+v", again)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if got, err := tx.Deliveries.PushConfig(ctx, "e1", "a"); err != nil || got.Token != "" || got.AuthCredentials != "" || got.URL != "https://h/a2" {
			t.Errorf("a delivered config keeps %+v, %v; want its token and credentials erased", got, err)
		}
		return nil
	})

	// Replaced while a delivery of it is under way, two days on: the new
	// config is delivered anew, whatever the old attempt reports.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Deliveries.PutPushConfig(ctx, crtx.PushConfig{TaskID: "e1", ID: "c", Wallet: "w1", URL: "https://h/old", CreatedAt: t0, NextAt: t0})
	})
	old := claim(t0.Add(time.Hour))
	if len(old) != 1 {
		t.Fatalf("claimed %+v; want c", old)
	}
	later := t0.Add(48 * time.Hour)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Deliveries.PutPushConfig(ctx, crtx.PushConfig{TaskID: "e1", ID: "c", Wallet: "w1", URL: "https://h/new", CreatedAt: later, NextAt: later}); err != nil {
			return err
		}
		done := later.Add(time.Second)
		old[0].DeliveredAt = &done
		return tx.Deliveries.UpdatePush(ctx, old[0])
	})
	var fresh []crtx.PushConfig
	update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		fresh, err = tx.Deliveries.ClaimPushes(ctx, later.Add(2*time.Second), later.Add(time.Minute), later.Add(-time.Hour), 10)
		return err
	})
	if len(fresh) != 1 || fresh[0].URL != "https://h/new" {
		t.Errorf("after a replacement during delivery, claimed %+v; want the new config", fresh)
	}
}
