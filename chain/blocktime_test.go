package chain

import (
	"testing"
	"time"
)

// The block time is measured from readings of the height, once they span
// clockBlocks; a lagging node's reading is ignored, a cluster that starts
// again starts the measure again, and a long measure starts again from its
// last reading while the last result stands.
func TestBlockClock(t *testing.T) {
	var b blockClock
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if b.blockTime() != 0 || !b.stale(t0) {
		t.Fatal("a clock that read nothing knows a block time, or is not stale")
	}
	b.observe(at(0), 1000)
	b.observe(at(time.Second), 1010) // 10 blocks: not enough yet
	if got := b.blockTime(); got != 0 {
		t.Errorf("after 10 blocks: %v, want unknown", got)
	}
	if b.stale(at(1500*time.Millisecond)) || !b.stale(at(2*time.Second)) {
		t.Error("stale is not a second after the last reading")
	}
	b.observe(at(4*time.Second), 1040) // 40 blocks in 4 s
	if got := b.blockTime(); got != 100*time.Millisecond {
		t.Errorf("40 blocks in 4 s: %v, want 100ms", got)
	}
	b.observe(at(5*time.Second), 1030) // a node behind
	b.observe(at(8*time.Second), 1080)
	if got := b.blockTime(); got != 100*time.Millisecond {
		t.Errorf("after a lagging node's reading: %v, want 100ms", got)
	}
	// Past clockSpan the measure starts again from its last reading, and
	// its result stands until the new one spans enough.
	b.observe(at(clockSpan+8*time.Second), 1080+uint64(clockSpan/(200*time.Millisecond)))
	slower := b.blockTime()
	b.observe(at(clockSpan+9*time.Second), 1080+uint64(clockSpan/(200*time.Millisecond))+5)
	if got := b.blockTime(); got != slower || slower <= 100*time.Millisecond {
		t.Errorf("a slower cluster: %v then %v", slower, got)
	}
	// A cluster started again (a lower height): nothing is known.
	b.observe(at(clockSpan+10*time.Second), 3)
	if got := b.blockTime(); got != 0 {
		t.Errorf("after the cluster started again: %v, want unknown", got)
	}
}
