package web

import "testing"

// A run's typical time is said as people read it: none when no run
// completed, "< 1 ms" for one under a millisecond rather than "0 ms".
func TestLatencyInWords(t *testing.T) {
	latency := funcs()["latency"].(func(int64, float64) string)
	for _, c := range []struct {
		ms   int64
		rate float64
		want string
	}{{0, 0, "—"}, {12, 0, "—"}, {0, 0.5, "< 1 ms"}, {1, 1, "1 ms"}, {340, 0.9, "340 ms"}} {
		if got := latency(c.ms, c.rate); got != c.want {
			t.Errorf("latency(%d, %v) = %q, want %q", c.ms, c.rate, got, c.want)
		}
	}
}
