package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func execution(id string, at time.Time) crtx.Execution {
	return crtx.Execution{ID: id, Environment: crtx.Devnet, Wallet: "w1", KeyID: "key_1", AgentID: "a1", AgentName: "Agent a1",
		Creator: "w1", EndpointURL: "https://a1.example/execute", SigningPublicKey: "key-a1", Task: "do " + id,
		Parameters: json.RawMessage(`{"x":1}`), TimeoutSeconds: 30, Cost: 100_000, Held: 100_000, Base: 100_000, CreatorAmount: 99_000, PlatformAmount: 1_000,
		Status: crtx.ExecPending, InitiatedAt: at, Deadline: at.Add(30 * time.Second), LeaseUntil: at.Add(10 * time.Second)}
}

func testExecutions(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		// Each execution is counted against a key of its wallet and
		// environment, as the domain does when it charges one.
		for _, k := range []crtx.APIKey{{ID: "key_1", Environment: crtx.Devnet}, {ID: "key_m", Environment: crtx.Mainnet}} {
			k.Wallet, k.Name, k.Prefix, k.Hash, k.CreatedAt = "w1", k.ID, "p", "hash-"+k.ID, t0
			if err := tx.Access.InsertKey(ctx, k); err != nil {
				return err
			}
		}
		for i := range 4 {
			e := execution(fmt.Sprintf("e%d", i), t0.Add(time.Duration(i)*time.Minute))
			if i == 3 {
				e.Environment, e.KeyID = crtx.Mainnet, "key_m"
			}
			if err := tx.Executions.InsertExecution(ctx, e); err != nil {
				return err
			}
			if err := tx.Access.AddKeyUsage(ctx, e.KeyID, e.Cost); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Executions.Execution(ctx, "e1")
		if want := execution("e1", t0.Add(time.Minute)); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Execution(e1) =\n%+v, %v\nwant\n%+v", got, err, want)
		}
		if _, err := tx.Executions.Execution(ctx, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown execution: %v", err)
		}
		return nil
	})
	// Finish e0 with everything set.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e, _ := tx.Executions.Execution(ctx, "e0")
		now, tokens, ms := t0.Add(time.Hour), int64(7), int64(1234)
		e.Status, e.ResultCID, e.ResultHash, e.Signature, e.TokensUsed, e.ExecutionTimeMS = crtx.ExecCompleted, "cid", "sha256:x", "sig", &tokens, &ms
		e.DispatchedAt, e.CompletedAt, e.Attempts = &now, &now, 2
		return tx.Executions.UpdateExecution(ctx, e)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e, _ := tx.Executions.Execution(ctx, "e0")
		if e.Status != crtx.ExecCompleted || *e.TokensUsed != 7 || *e.ExecutionTimeMS != 1234 || !e.CompletedAt.Equal(t0.Add(time.Hour)) || e.Attempts != 2 {
			t.Errorf("updated e0 = %+v", e)
		}
		// What a wallet's escrows hold: the cost of its executions in flight
		// (e1 and e2 on devnet, e3 on mainnet), not of finished ones.
		for _, c := range []struct {
			env    crtx.Environment
			wallet string
			want   crtx.USDC
		}{{crtx.Devnet, "w1", 200_000}, {crtx.Mainnet, "w1", 100_000}, {crtx.Devnet, "w2", 0}} {
			if got, err := tx.Ledger.Escrowed(ctx, c.env, c.wallet); err != nil || got != c.want {
				t.Errorf("escrowed of %s on %s = %v, %v; want %v", c.wallet, c.env, got, err, c.want)
			}
		}
		list, total, err := tx.Executions.ListExecutions(ctx, crtx.ExecutionQuery{Wallet: "w1", Environment: crtx.Devnet, Limit: 10})
		if err != nil || total != 3 || len(list) != 3 || list[0].ID != "e2" || list[2].ID != "e0" {
			t.Errorf("ListExecutions = %v (%d), %v", list, total, err)
		}
		from, to := t0.Add(time.Minute), t0.Add(2*time.Minute)
		list, total, _ = tx.Executions.ListExecutions(ctx, crtx.ExecutionQuery{Wallet: "w1", Environment: crtx.Devnet, From: &from, To: &to, Limit: 10})
		if total != 1 || list[0].ID != "e1" {
			t.Errorf("from/to = %v", list)
		}
		_, total, _ = tx.Executions.ListExecutions(ctx, crtx.ExecutionQuery{Wallet: "w1", Environment: crtx.Devnet, Status: crtx.ExecCompleted, Limit: 10})
		if total != 1 {
			t.Errorf("status filter total %d", total)
		}
		_, total, _ = tx.Executions.ListExecutions(ctx, crtx.ExecutionQuery{Wallet: "w2", Environment: crtx.Devnet, Limit: 10})
		if total != 0 {
			t.Errorf("another wallet sees %d", total)
		}
		if list, total, _ = tx.Executions.ListExecutions(ctx, crtx.ExecutionQuery{Wallet: "w1", Environment: crtx.Mainnet, Limit: 10}); total != 1 || len(list) != 1 {
			t.Errorf("mainnet: %d of %d", len(list), total)
		}
		return nil
	})
	// Claims: only non-final executions whose lease ran out, once each.
	var claimed []crtx.Execution
	update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		claimed, err = tx.Executions.ClaimExecutions(ctx, "r1", t0.Add(time.Minute+11*time.Second), t0.Add(time.Hour), nil, 10)
		return err
	})
	if len(claimed) != 1 || claimed[0].ID != "e1" || claimed[0].Attempts != 1 || !claimed[0].LeaseUntil.Equal(t0.Add(time.Hour)) || claimed[0].Owner != "r1" {
		t.Errorf("claimed = %+v", claimed)
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		again, err := tx.Executions.ClaimExecutions(ctx, "r1", t0.Add(time.Minute+11*time.Second), t0.Add(time.Hour), nil, 10)
		if len(again) != 0 {
			t.Errorf("claimed twice: %v", again)
		}
		return err
	})
	// Leases are renewed many at once, only those the owner holds of
	// executions not final: e0 is final, e1 is r1's. The list is longer
	// than one statement takes, e2 past the first part.
	ids := []string{"e0", "e1"}
	for i := range 600 {
		ids = append(ids, fmt.Sprintf("unknown-%d", i))
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		renewed, err := tx.Executions.RenewLeases(ctx, "", append(ids, "e2"), t0, t0.Add(2*time.Hour))
		if fmt.Sprint(renewed) != "[e2]" {
			t.Errorf("renewed %v, want [e2]", renewed)
		}
		return err
	})
	// Only the owner renews: another replica took the execution over.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		renewed, err := tx.Executions.RenewLeases(ctx, "someone-else", []string{"e1", "e2"}, t0, t0.Add(3*time.Hour))
		if len(renewed) != 0 {
			t.Errorf("another owner renewed %v", renewed)
		}
		return err
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for id, want := range map[string]time.Time{"e1": t0.Add(time.Hour), "e2": t0.Add(2 * time.Hour)} {
			if e, _ := tx.Executions.Execution(ctx, id); !e.LeaseUntil.Equal(want) {
				t.Errorf("%s's lease = %v, want %v", id, e.LeaseUntil, want)
			}
		}
		return nil
	})
	// FinishExecution writes the outcome once: a final execution stays as it is.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e, _ := tx.Executions.Execution(ctx, "e1")
		now, ms := t0.Add(2*time.Hour), int64(5)
		e.Status, e.ErrorCode, e.ErrorMessage, e.ExecutionTimeMS, e.CompletedAt = crtx.ExecFailed, "execution_timeout", "late", &ms, &now
		e.Attempts, e.LeaseUntil = 9, now // not outcome fields: left as stored
		if ok, err := tx.Executions.FinishExecution(ctx, e); !ok || err != nil {
			t.Errorf("finishing e1: %v, %v", ok, err)
		}
		e.Status, e.ErrorCode = crtx.ExecCompleted, ""
		if ok, err := tx.Executions.FinishExecution(ctx, e); ok || err != nil {
			t.Errorf("finishing e1 again: %v, %v", ok, err)
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e, _ := tx.Executions.Execution(ctx, "e1")
		if e.Status != crtx.ExecFailed || e.ErrorCode != "execution_timeout" || e.ErrorMessage != "late" || *e.ExecutionTimeMS != 5 ||
			!e.CompletedAt.Equal(t0.Add(2*time.Hour)) || e.Attempts != 1 || !e.LeaseUntil.Equal(t0.Add(time.Hour)) {
			t.Errorf("finished e1 = %+v", e)
		}
		// The wallet's spending per day and agent leaves the failed e1's
		// refunded price out, and the other environment's e3.
		day := t0.Truncate(24 * time.Hour)
		got, err := tx.Executions.WalletSpending(ctx, "w1", crtx.Devnet, day)
		want := []crtx.DaySpend{{Date: "2026-11-22", AgentID: "a1", AgentName: "Agent a1", Spent: 200_000, Calls: 3}}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("WalletSpending = %+v, %v; want %+v", got, err, want)
		}
		if got, err := tx.Executions.WalletSpending(ctx, "w1", crtx.Devnet, t0.Add(time.Hour)); err != nil || len(got) != 0 {
			t.Errorf("WalletSpending since after the calls = %+v, %v", got, err)
		}
		return nil
	})
}

func testKeyUsage(t *testing.T, s crtx.Store) {
	limit := crtx.USDC(250)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Access.InsertKey(ctx, crtx.APIKey{ID: "k", Name: "k", Environment: crtx.Devnet, Prefix: "p", CreatedAt: t0, SpendLimit: &limit, Wallet: "w", Hash: "h"})
	})
	for range 2 {
		update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Access.AddKeyUsage(ctx, "k", 100) })
	}
	err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Access.AddKeyUsage(context.Background(), "k", 100) })
	if !errors.Is(err, crtx.ErrSpendLimit) {
		t.Errorf("past the limit: %v, want ErrSpendLimit", err)
	}
	// A revoked key, or one that does not exist, counts nothing.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Access.RevokeKey(ctx, "k", t0) })
	for _, id := range []string{"k", "nope"} {
		err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Access.AddKeyUsage(context.Background(), id, 1) })
		if !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("usage of key %s: %v, want ErrNotFound", id, err)
		}
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		k, _ := tx.Access.KeyByID(ctx, "k")
		if k.ExecutionCount != 2 || k.TotalSpent != 200 {
			t.Errorf("counters = %d, %s", k.ExecutionCount, k.TotalSpent)
		}
		return nil
	})
}

// Anyone reads a result by CID only while a public execution names it; a
// private execution's is read through its record alone.
func testPublishedResults(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		if err := tx.Access.InsertKey(ctx, crtx.APIKey{ID: "key_1", Environment: crtx.Devnet, Wallet: "w1", Name: "k", Prefix: "p", Hash: "h", CreatedAt: t0}); err != nil {
			return err
		}
		for _, id := range []string{"public", "private"} {
			e := execution(id, t0)
			e.Status, e.ResultCID, e.ResultHash, e.Private = crtx.ExecCompleted, "cid-"+id, "sha256:"+id, id == "private"
			if err := tx.Executions.InsertExecution(ctx, e); err != nil {
				return err
			}
			if err := tx.Executions.PutResult(ctx, e.ResultCID, "result of "+id, t0); err != nil {
				return err
			}
		}
		return tx.Executions.PutResult(ctx, "cid-nobody", "named by no execution", t0)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if c, err := tx.Executions.PublishedResult(ctx, "cid-public"); err != nil || c != "result of public" {
			t.Errorf("PublishedResult(public) = %q, %v", c, err)
		}
		// A preview counts characters, whatever their bytes.
		if c, err := tx.Executions.ResultStart(ctx, "cid-public", 9); err != nil || c != "result of" {
			t.Errorf("ResultStart(public, 9) = %q, %v", c, err)
		}
		if _, err := tx.Executions.ResultStart(ctx, "cid-unknown", 9); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("ResultStart(unknown): %v, want ErrNotFound", err)
		}
		for _, cid := range []string{"cid-private", "cid-nobody", "cid-unknown"} {
			if _, err := tx.Executions.PublishedResult(ctx, cid); !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("PublishedResult(%s): %v, want ErrNotFound", cid, err)
			}
		}
		if c, err := tx.Executions.Result(ctx, "cid-private"); err != nil || c != "result of private" {
			t.Errorf("Result(private) = %q, %v", c, err)
		}
		if e, err := tx.Executions.Execution(ctx, "private"); err != nil || !e.Private {
			t.Errorf("the private execution reads back as %+v, %v", e, err)
		}
		return nil
	})
}

func testResultsAndIdempotency(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Executions.PutResult(ctx, "c1", "héllo", t0); err != nil {
			return err
		}
		return tx.Executions.PutResult(ctx, "c1", "ignored", t0)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if c, err := tx.Executions.Result(ctx, "c1"); err != nil || c != "héllo" {
			t.Errorf("Result = %q, %v", c, err)
		}
		if c, err := tx.Executions.ResultStart(ctx, "c1", 2); err != nil || c != "hé" {
			t.Errorf("ResultStart(c1, 2) = %q, %v; want two characters", c, err)
		}
		if _, err := tx.Executions.Result(ctx, "c2"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown result: %v", err)
		}
		return nil
	})
	i := crtx.Idempotency{Wallet: "w", Environment: crtx.Mainnet, Key: "k", RequestHash: "h", ExecutionID: "e", CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Executions.InsertIdempotency(ctx, i) })
	if err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Executions.InsertIdempotency(context.Background(), i) }); !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a second insert: %v", err)
	}
	// The same key in the other environment is another key.
	devnet := i
	devnet.Environment, devnet.ExecutionID = crtx.Devnet, "e-devnet"
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Executions.InsertIdempotency(ctx, devnet) })
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Executions.CompleteIdempotency(ctx, "w", crtx.Mainnet, "k", 200, []byte(`{"a":1}`))
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Executions.Idempotency(ctx, "w", crtx.Mainnet, "k")
		if err != nil || got.Status != 200 || string(got.Body) != `{"a":1}` || got.ExecutionID != "e" || !got.CreatedAt.Equal(t0) {
			t.Errorf("Idempotency = %+v, %v", got, err)
		}
		if got, err := tx.Executions.Idempotency(ctx, "w", crtx.Devnet, "k"); err != nil || got.Status != 0 || got.ExecutionID != "e-devnet" {
			t.Errorf("the devnet key = %+v, %v; want its own, not completed", got, err)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Executions.DeleteIdempotency(ctx, "w", crtx.Mainnet, "k")
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Executions.Idempotency(ctx, "w", crtx.Mainnet, "k"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("deleted key: %v", err)
		}
		if _, err := tx.Executions.Idempotency(ctx, "w", crtx.Devnet, "k"); err != nil {
			t.Errorf("deleting the mainnet key deleted the devnet one: %v", err)
		}
		return nil
	})
}

func testWebhooks(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		tx.Catalog.EnsureCreator(ctx, "w1", t0)
		tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0))
		for _, id := range []string{"e1", "e2"} {
			if err := tx.Executions.InsertExecution(ctx, execution(id, t0)); err != nil {
				return err
			}
		}
		if err := tx.Deliveries.InsertWebhook(ctx, crtx.Webhook{ExecutionID: "e1", URL: "https://h/1", NextAt: t0, CreatedAt: t0}); err != nil {
			return err
		}
		return tx.Deliveries.InsertWebhook(ctx, crtx.Webhook{ExecutionID: "e2", URL: "https://h/2", NextAt: t0.Add(time.Hour), CreatedAt: t0})
	})
	var due []crtx.Webhook
	update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		due, err = tx.Deliveries.ClaimWebhooks(ctx, t0.Add(time.Second), t0.Add(time.Minute), t0.Add(-time.Hour), 10)
		return err
	})
	if len(due) != 1 || due[0].ExecutionID != "e1" || due[0].Attempts != 1 {
		t.Fatalf("due = %+v", due)
	}
	delivered := t0.Add(2 * time.Second)
	due[0].DeliveredAt = &delivered
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Deliveries.UpdateWebhook(ctx, due[0]) })
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		again, err := tx.Deliveries.ClaimWebhooks(ctx, t0.Add(2*time.Hour), t0.Add(3*time.Hour), t0.Add(-time.Hour), 10)
		if len(again) != 1 || again[0].ExecutionID != "e2" {
			t.Errorf("second claim = %+v", again)
		}
		expired, _ := tx.Deliveries.ClaimWebhooks(ctx, t0.Add(4*time.Hour), t0.Add(5*time.Hour), t0.Add(time.Second), 10)
		if len(expired) != 0 {
			t.Errorf("a webhook past its window was claimed: %+v", expired)
		}
		return err
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		w, err := tx.Deliveries.Webhook(ctx, "e1")
		if err != nil || w.DeliveredAt == nil || !w.DeliveredAt.Equal(delivered) {
			t.Errorf("Webhook(e1) = %+v, %v", w, err)
		}
		return nil
	})
}

// A wallet's webhook secret is made once in each environment: a second
// insert keeps the first, and a rotation keeps the old one beside the new,
// in its environment only.
func testWebhookSecrets(t *testing.T, s crtx.Store) {
	first := crtx.NewWebhookSecret("w1", crtx.Mainnet, t0)
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Deliveries.WebhookSecret(ctx, "w1", crtx.Mainnet); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("no secret yet: %v", err)
		}
		if err := tx.Deliveries.InsertWebhookSecret(ctx, first); err != nil {
			return err
		}
		if err := tx.Deliveries.InsertWebhookSecret(ctx, crtx.NewWebhookSecret("w1", crtx.Mainnet, t0.Add(time.Second))); err != nil {
			return err
		}
		return tx.Deliveries.InsertWebhookSecret(ctx, crtx.NewWebhookSecret("w1", crtx.Devnet, t0))
	})
	rotated := first.Rotate(t0.Add(time.Hour))
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Deliveries.WebhookSecret(ctx, "w1", crtx.Mainnet)
		if err != nil || !bytes.Equal(got.Key, first.Key) || got.Previous != nil || !got.RotatedAt.Equal(t0) {
			t.Errorf("WebhookSecret(w1) = %+v, %v; want the first", got, err)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Deliveries.UpdateWebhookSecret(ctx, rotated) })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Deliveries.WebhookSecret(ctx, "w1", crtx.Mainnet)
		if err != nil || !bytes.Equal(got.Key, rotated.Key) || !bytes.Equal(got.Previous, first.Key) || !got.PreviousUntil.Equal(rotated.PreviousUntil) {
			t.Errorf("after rotation = %+v, %v", got, err)
		}
		if devnet, err := tx.Deliveries.WebhookSecret(ctx, "w1", crtx.Devnet); err != nil || bytes.Equal(devnet.Key, first.Key) || bytes.Equal(devnet.Key, rotated.Key) || devnet.Previous != nil {
			t.Errorf("the devnet secret = %+v, %v; want its own, not rotated", devnet, err)
		}
		return nil
	})
}
