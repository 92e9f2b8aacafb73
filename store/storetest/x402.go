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
	p := crtx.Payment{Signature: "sig1", Environment: crtx.Devnet, ExecutionID: "e1", Payer: "payer", Source: "src", Amount: 20_000,
		Network: "solana:local", Raw: []byte{1, 2, 3}, LastValid: 150, Status: crtx.PaymentVerified, CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.InsertPayment(ctx, p) })
	again := p
	again.ExecutionID = "e2"
	err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.InsertPayment(context.Background(), again) })
	if !errors.Is(err, crtx.ErrConflict) {
		t.Fatalf("the same signature claimed twice: %v, want ErrConflict", err)
	}
	sent := p
	sent.Status, sent.Reply = crtx.PaymentSent, json.RawMessage(`{"status":"completed"}`)
	// Nothing skips sent: verified never becomes settled.
	skip := sent
	skip.Status = crtx.PaymentSettled
	if err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.UpdatePayment(context.Background(), skip, crtx.PaymentVerified) }); err == nil {
		t.Error("a payment went from verified to settled")
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.UpdatePayment(ctx, sent, crtx.PaymentVerified) })
	// A move from a status it left is refused: a process that read it
	// verified cannot let it go once another sent it.
	void := sent
	void.Status = crtx.PaymentVoid
	if err := s.Update(context.Background(), func(tx crtx.Tx) error { return tx.UpdatePayment(context.Background(), void, crtx.PaymentVerified) }); !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("voided from verified once sent: %v, want ErrConflict", err)
	}
	settled := sent
	at := t0.Add(time.Second)
	settled.Status, settled.Slot, settled.SettledAt = crtx.PaymentSettled, 77, &at
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.UpdatePayment(ctx, settled, crtx.PaymentSent) })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, read := range []func() (crtx.Payment, error){
			func() (crtx.Payment, error) { return tx.Payment(ctx, "sig1") },
			func() (crtx.Payment, error) { return tx.PaymentOf(ctx, "e1") },
		} {
			if got, err := read(); err != nil || !reflect.DeepEqual(got, settled) {
				t.Errorf("read %+v, %v; want %+v", got, err, settled)
			}
		}
		if _, err := tx.PaymentOf(ctx, "e2"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("PaymentOf(unknown): %v, want ErrNotFound", err)
		}
		return nil
	})
	void = settled
	void.Status = crtx.PaymentVoid
	err = s.Update(context.Background(), func(tx crtx.Tx) error { return tx.UpdatePayment(context.Background(), void, crtx.PaymentSent) })
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a settled payment changed: %v, want ErrConflict", err)
	}
	// The payments in flight from a token account are summed: verified
	// and sent ones, not settled or void ones.
	first := crtx.Payment{Signature: "sig2", Environment: crtx.Devnet, ExecutionID: "e2", Payer: "payer", Source: "src", Amount: 7,
		Network: "solana:local", Raw: []byte{1}, Status: crtx.PaymentVerified, CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.InsertPayment(ctx, first) })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if sum, err := tx.PaymentsInFlight(ctx, "src"); err != nil || sum != 7 {
			t.Errorf("in flight from src: %s, %v; want 7 base units", sum, err)
		}
		if sum, err := tx.PaymentsInFlight(ctx, "none"); err != nil || sum != 0 {
			t.Errorf("in flight from none: %s, %v", sum, err)
		}
		return nil
	})
}
