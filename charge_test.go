package crtx_test

import (
	"testing"

	"github.com/crtx-market/crtx"
)

// A call's charge is its price less what came back: all of it for a
// failure, a dispute's refund for a disputed call; and nothing either way
// for an x402 call whose payment never landed.
func TestCharge(t *testing.T) {
	void := &crtx.Payment{Status: crtx.PaymentVoid}
	settled := &crtx.Payment{Status: crtx.PaymentSettled}
	for _, c := range []struct {
		status            crtx.ExecStatus
		dispute           *crtx.Dispute
		paid              *crtx.Payment
		refunded, charged crtx.USDC
	}{
		{crtx.ExecCompleted, nil, nil, 0, 50_000},
		{crtx.ExecFailed, nil, nil, 50_000, 0},
		{crtx.ExecDisputed, &crtx.Dispute{Refunded: 20_000}, nil, 20_000, 30_000},
		{crtx.ExecDisputed, &crtx.Dispute{Refunded: 80_000}, nil, 80_000, 0}, // a refund past the price, from the slash
		{crtx.ExecDisputed, &crtx.Dispute{Status: "rejected"}, nil, 0, 50_000},
		{crtx.ExecFailed, nil, void, 0, 0},
		{crtx.ExecFailed, nil, settled, 50_000, 0}, // settled, then refunded
		{crtx.ExecCompleted, nil, settled, 0, 50_000},
	} {
		e := crtx.Execution{Status: c.status, Cost: 50_000, Dispute: c.dispute, Paid: c.paid}
		if r, ch := e.Charge(); r != c.refunded || ch != c.charged {
			t.Errorf("%s, dispute %+v, payment %+v: refunded %s, charged %s; want %s, %s", c.status, c.dispute, c.paid, r, ch, c.refunded, c.charged)
		}
	}
}
