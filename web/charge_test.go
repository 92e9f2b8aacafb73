package web

import (
	"testing"

	"github.com/crtx-market/crtx"
)

// A run's charge is its price less what came back: all of it for a
// failure, a dispute's refund for a disputed one.
func TestCharge(t *testing.T) {
	for _, c := range []struct {
		status            crtx.ExecStatus
		dispute           crtx.USDC
		refunded, charged crtx.USDC
	}{
		{crtx.ExecCompleted, 0, 0, 50_000},
		{crtx.ExecFailed, 0, 50_000, 0},
		{crtx.ExecDisputed, 20_000, 20_000, 30_000},
		{crtx.ExecDisputed, 80_000, 80_000, 0}, // a refund past the price, from the slash
	} {
		r, ch := charge(crtx.Execution{Status: c.status, Cost: 50_000}, c.dispute)
		if r != c.refunded || ch != c.charged {
			t.Errorf("%s with a dispute refund of %s: refunded %s, charged %s; want %s, %s", c.status, c.dispute, r, ch, c.refunded, c.charged)
		}
	}
}

// A name a spreadsheet would take for a formula is quoted as text.
func TestCSVText(t *testing.T) {
	for in, want := range map[string]string{"Greeter": "Greeter", "=HYPERLINK(1)": "'=HYPERLINK(1)", "  +1": "'  +1",
		"\t=1": "'\t=1", "\r=1": "'\r=1", "@SUM": "'@SUM", "-2": "'-2", "a=b": "a=b"} {
		if got := csvText(in); got != want {
			t.Errorf("csvText(%q) = %q, want %q", in, got, want)
		}
	}
}
