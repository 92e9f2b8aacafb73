package e2e_test

import (
	"bytes"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// A disputed execution keeps the receipt it had: the same bytes before the
// dispute, while it is open and after its ruling. The outcome is a
// statement of its own, signed by the marketplace key, which the client
// checks offline from its bytes and refuses once changed.
func TestDisputeKeepsTheReceiptAndHasItsOwnRuling(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.05")
	rec := m.ran(t, m.key, agent)
	wk, err := m.anon.WellKnown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	marketKey, _ := crtx.ParseAddress("key", wk.SigningPublicKey)
	receipt := func() []byte {
		t.Helper()
		raw, err := m.key.Receipt(ctx, rec.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	before := receipt()
	_, err = m.key.Ruling(ctx, rec.ExecutionID)
	wantCode(t, err, 404, "dispute_not_found")

	d, err := m.key.OpenDispute(ctx, rec.ExecutionID, crtx.DisputeParams{Reason: "fraud", Description: "not what was asked"})
	if err != nil {
		t.Fatal(err)
	}
	if open := receipt(); !bytes.Equal(open, before) {
		t.Errorf("receipt while the dispute is open:\n%s\nwant as before:\n%s", open, before)
	}
	_, err = m.key.Ruling(ctx, rec.ExecutionID)
	wantCode(t, err, 409, "not_final")

	slash, refund := crtx.USDC(30_000), crtx.USDC(20_000)
	if _, err := m.admin.ResolveDispute(ctx, d.DisputeID, crtx.ResolveParams{Outcome: "upheld", Slash: &slash, Refund: &refund}); err != nil {
		t.Fatal(err)
	}
	if after := receipt(); !bytes.Equal(after, before) {
		t.Errorf("receipt after the ruling:\n%s\nwant as before:\n%s", after, before)
	}
	if rc, err := client.VerifyReceipt(before, marketKey); err != nil || rc.Status != crtx.ExecCompleted {
		t.Errorf("the receipt kept: %+v, %v", rc, err)
	}
	// The whole procedure of docs/verify.md holds for the disputed
	// execution: its receipt agrees with the record that says disputed.
	if report, err := m.key.Verify(ctx, rec.ExecutionID); err != nil || !report.OK() {
		t.Errorf("verifying the disputed execution: %+v, %v", report, err)
	}
	raw, err := m.key.Ruling(ctx, rec.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := client.VerifyRuling(raw, marketKey)
	if err != nil {
		t.Fatalf("ruling %s: %v", raw, err)
	}
	if rl.DisputeID != d.DisputeID || rl.ExecutionID != rec.ExecutionID || rl.Outcome != "upheld" || rl.Slashed != slash ||
		rl.Refunded != refund || rl.Reason != "fraud" || rl.Wallet != m.callerW.address || rl.Issuer != wk.PublicURL || rl.Environment != crtx.Devnet {
		t.Errorf("ruling = %+v", rl)
	}
	for name, bad := range map[string][]byte{
		"another refund":    bytes.Replace(raw, []byte(`"refunded_usdc":0.02`), []byte(`"refunded_usdc":0.03`), 1),
		"another outcome":   bytes.Replace(raw, []byte(`"upheld"`), []byte(`"rejected"`), 1),
		"an unknown member": bytes.Replace(raw, []byte(`{`), []byte(`{"note":"x",`), 1),
		"a member twice":    bytes.Replace(raw, []byte(`{`), []byte(`{"outcome":"rejected",`), 1),
		"a receipt":         before,
	} {
		if bytes.Equal(bad, raw) {
			t.Fatalf("%s: the ruling was not changed", name)
		}
		if _, err := client.VerifyRuling(bad, marketKey); err == nil {
			t.Errorf("%s: the ruling verifies", name)
		}
	}
	if _, err := client.VerifyReceipt(raw, marketKey); err == nil {
		t.Error("a ruling verifies as a receipt")
	}
}
