package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testPayments: an x402 payment's signature is claimed once, and once
// settled or void it changes no more.
func testPayments(t *testing.T, s crtx.Store) {
	p := crtx.Payment{Scheme: "exact", Signature: "sig1", Environment: crtx.Devnet, ExecutionID: "e1", Payer: "payer", Source: "src", Amount: 20_000,
		Network: "solana:local", Raw: []byte{1, 2, 3}, LastValid: 150, Status: crtx.PaymentVerified, CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.InsertPayment(ctx, p) })
	again := p
	again.ExecutionID = "e2"
	err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Funds.InsertPayment(context.Background(), again) })
	if !errors.Is(err, crtx.ErrConflict) {
		t.Fatalf("the same signature claimed twice: %v, want ErrConflict", err)
	}
	sent := p
	sent.Status, sent.Reply = crtx.PaymentSent, json.RawMessage(`{"status":"completed"}`)
	// Nothing skips sent: verified never becomes settled.
	skip := sent
	skip.Status = crtx.PaymentSettled
	if err := s.Update(context.Background(), func(tx crtx.Tx) error {
		return tx.Funds.UpdatePayment(context.Background(), skip, crtx.PaymentVerified)
	}); err == nil {
		t.Error("a payment went from verified to settled")
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Funds.UpdatePayment(ctx, sent, crtx.PaymentVerified)
	})
	// A move from a status it left is refused: a process that read it
	// verified cannot let it go once another sent it.
	void := sent
	void.Status = crtx.PaymentVoid
	if err := s.Update(context.Background(), func(tx crtx.Tx) error {
		return tx.Funds.UpdatePayment(context.Background(), void, crtx.PaymentVerified)
	}); !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("voided from verified once sent: %v, want ErrConflict", err)
	}
	settled := sent
	at := t0.Add(time.Second)
	settled.Status, settled.Slot, settled.SettledAt = crtx.PaymentSettled, 77, &at
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Funds.UpdatePayment(ctx, settled, crtx.PaymentSent)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, read := range []func() (crtx.Payment, error){
			func() (crtx.Payment, error) { return tx.Funds.Payment(ctx, "sig1") },
			func() (crtx.Payment, error) { return tx.Funds.PaymentOf(ctx, "e1") },
		} {
			if got, err := read(); err != nil || !reflect.DeepEqual(got, settled) {
				t.Errorf("read %+v, %v; want %+v", got, err, settled)
			}
		}
		if _, err := tx.Funds.PaymentOf(ctx, "e2"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("PaymentOf(unknown): %v, want ErrNotFound", err)
		}
		return nil
	})
	void = settled
	void.Status = crtx.PaymentVoid
	err = s.Update(context.Background(), func(tx crtx.Tx) error { return tx.Funds.UpdatePayment(context.Background(), void, crtx.PaymentSent) })
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a settled payment changed: %v, want ErrConflict", err)
	}
	// The payments in flight from a token account are summed: verified
	// and sent ones, not settled or void ones.
	first := crtx.Payment{Scheme: "exact", Signature: "sig2", Environment: crtx.Devnet, ExecutionID: "e2", Payer: "payer", Source: "src", Amount: 7,
		Network: "solana:local", Raw: []byte{1}, Status: crtx.PaymentVerified, CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Funds.InsertPayment(ctx, first) })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if sum, err := tx.Funds.PaymentsInFlight(ctx, "src"); err != nil || sum != 7 {
			t.Errorf("in flight from src: %s, %v; want 7 base units", sum, err)
		}
		if sum, err := tx.Funds.PaymentsInFlight(ctx, "none"); err != nil || sum != 0 {
			t.Errorf("in flight from none: %s, %v", sum, err)
		}
		return nil
	})
}

// testPaidOutcomes: an agent's x402 calls since a time that ended with
// their payment settled are counted, and those of them that failed (paid
// first, then refunded); a failed call never paid, a key's call, an older
// call and another agent's are not.
func testPaidOutcomes(t *testing.T, s crtx.Store) {
	since := t0.Add(time.Hour)
	calls := []struct {
		id, agent, key string
		at             time.Time
		status         crtx.ExecStatus
		payment        crtx.PaymentStatus
	}{
		{"ok", "a1", crtx.X402Key, since, crtx.ExecCompleted, crtx.PaymentSettled},
		{"refunded", "a1", crtx.X402Key, since.Add(time.Minute), crtx.ExecFailed, crtx.PaymentSettled},
		{"refunded-too", "a1", crtx.X402Key, since.Add(2 * time.Minute), crtx.ExecFailed, crtx.PaymentSettled},
		{"never-paid", "a1", crtx.X402Key, since.Add(time.Minute), crtx.ExecFailed, crtx.PaymentVoid},
		{"running", "a1", crtx.X402Key, since.Add(time.Minute), crtx.ExecRunning, crtx.PaymentSettled},
		{"keyed", "a1", "key_1", since.Add(time.Minute), crtx.ExecFailed, ""},
		{"older", "a1", crtx.X402Key, since.Add(-time.Second), crtx.ExecFailed, crtx.PaymentSettled},
		{"other", "a2", crtx.X402Key, since.Add(time.Minute), crtx.ExecFailed, crtx.PaymentSettled},
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		for _, id := range []string{"a1", "a2"} {
			if err := tx.Catalog.InsertAgent(ctx, agent(id, "w1", 100_000, nil, t0)); err != nil {
				return err
			}
		}
		for _, c := range calls {
			e := execution(c.id, c.at)
			e.AgentID, e.KeyID, e.Status = c.agent, c.key, c.status
			if err := tx.Executions.InsertExecution(ctx, e); err != nil {
				return err
			}
			if c.payment == "" {
				continue
			}
			if err := tx.Funds.InsertPayment(ctx, crtx.Payment{Scheme: "exact", Signature: "sig-" + c.id, Environment: crtx.Devnet, ExecutionID: c.id,
				Payer: "w1", Source: "src", Amount: 100_000, Network: "solana:local", Raw: []byte{1}, Status: c.payment, CreatedAt: c.at}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if ended, failed, err := tx.Funds.PaidOutcomes(ctx, "a1", since); err != nil || ended != 3 || failed != 2 {
			t.Errorf("a1's paid outcomes: %d ended, %d failed, %v; want 3 and 2", ended, failed, err)
		}
		if ended, failed, err := tx.Funds.PaidOutcomes(ctx, "none", since); err != nil || ended != 0 || failed != 0 {
			t.Errorf("an unknown agent's paid outcomes: %d, %d, %v", ended, failed, err)
		}
		return nil
	})
}
