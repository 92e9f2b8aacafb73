package payment_test

import (
	"testing"
	"time"

	"github.com/crtx-market/crtx/payment"
)

// Each stage sums its own time and count, and every stage is reported,
// passed or not.
func TestFiguresByStage(t *testing.T) {
	var f payment.Figures
	f.Timed(payment.StageSettle, time.Now().Add(-time.Second))
	f.Timed(payment.StageSettle, time.Now().Add(-time.Second))
	got := f.Stages()
	if len(got) != 4 {
		t.Fatalf("stages %v", got)
	}
	if s := got["settle"]; s.Count != 2 || s.Total < 2*time.Second {
		t.Fatalf("settle %+v", s)
	}
	if s := got["check"]; s.Count != 0 || s.Total != 0 {
		t.Fatalf("check %+v", s)
	}
}
