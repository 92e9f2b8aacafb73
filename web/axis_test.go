package web

import (
	"testing"
	"time"
)

// A chart's days end today, oldest first, each in its own slot inside the
// 600-unit plot, whatever the span.
func TestDayAxis(t *testing.T) {
	today := time.Date(2026, 11, 28, 23, 30, 0, 0, time.FixedZone("east", 5*3600))
	for span, first := range map[int]string{7: "2026-11-22", 30: "2026-10-30"} {
		axis := dayAxis(today, span)
		if len(axis) != span || axis[0].Date != first || axis[span-1].Date != "2026-11-28" {
			t.Errorf("%d days: %d slots from %s to %s", span, len(axis), axis[0].Date, axis[len(axis)-1].Date)
		}
		for i, d := range axis {
			if d.W <= 0 || d.X < 76 || d.X+d.W > 76+600 || i > 0 && d.X < axis[i-1].X+axis[i-1].W {
				t.Errorf("%d days: slot %d at %d, %d wide, overlaps or leaves the plot", span, i, d.X, d.W)
			}
		}
	}
}
