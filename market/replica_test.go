package market

import (
	"slices"
	"testing"
	"time"
)

// A replica is silent when its heartbeat stands still for three beats of
// the watcher's clock, whatever the clock it writes with; a watcher that
// cannot write its own heartbeat judges no one.
func TestSilentReplicas(t *testing.T) {
	hb := time.Second
	var b beats
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	skewed := t0.Add(-time.Hour) // a live replica whose clock is an hour behind
	for i := range 5 {
		now := t0.Add(time.Duration(i) * hb)
		b.beat(true, now)
		got := b.silent(map[string]time.Time{"live": skewed.Add(time.Duration(i) * hb), "dead": t0.Add(-time.Minute)}, now, hb)
		want := []string{}
		if i >= 3 {
			want = []string{"dead"}
		}
		if !slices.Equal(append([]string{}, got...), want) {
			t.Errorf("beat %d: silent %v, want %v", i, got, want)
		}
	}
	// Its own heartbeat failed: it judges no one, and watches afresh.
	now := t0.Add(5 * hb)
	b.beat(false, now)
	if got := b.silent(map[string]time.Time{"dead": t0.Add(-time.Minute)}, now, hb); len(got) != 0 {
		t.Errorf("silent %v while this replica cannot beat", got)
	}
	b.beat(true, now.Add(hb))
	if got := b.silent(map[string]time.Time{"dead": t0.Add(-time.Minute)}, now.Add(hb), hb); len(got) != 0 {
		t.Errorf("silent %v right after beating again; want three beats of watching first", got)
	}
}
