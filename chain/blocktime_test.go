package chain

import (
	"testing"
	"time"
)

// The block time is measured from readings of the height, once they span
// clockBlocks; a lagging node's reading is ignored, a cluster that starts
// again starts the measure again (its last result standing), and a long
// measure starts again from its last reading while its result stands.
// A reading is due once a second, whether the last one answered or not.
func TestBlockClock(t *testing.T) {
	var b blockClock
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if b.blockTime() != 0 || !b.try(t0) {
		t.Fatal("a clock that read nothing knows a block time, or has no reading due")
	}
	if b.try(at(500 * time.Millisecond)) {
		t.Error("a reading is due again half a second after one began, which never answered")
	}
	b.observe(at(0), 1000)
	b.observe(at(time.Second), 1010) // 10 blocks: not enough yet
	if got := b.blockTime(); got != 0 {
		t.Errorf("after 10 blocks: %v, want unknown", got)
	}
	if b.try(at(1500*time.Millisecond)) || !b.try(at(2*time.Second)) {
		t.Error("a reading is not due a second after the last one")
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
	// its result stands until the new one spans enough; a node a block
	// behind then is lag, not a new cluster.
	top := 1080 + uint64(clockSpan/(200*time.Millisecond))
	b.observe(at(clockSpan+8*time.Second), top)
	slower := b.blockTime()
	b.observe(at(clockSpan+9*time.Second), top-1)
	b.observe(at(clockSpan+10*time.Second), top+5)
	if got := b.blockTime(); got != slower || slower <= 100*time.Millisecond {
		t.Errorf("a slower cluster: %v then %v", slower, got)
	}
	if b.first.height != top {
		t.Errorf("a node a block behind restarted the measure at %d", b.first.height)
	}
	// A cluster started again (far lower heights): measured anew, the last
	// result standing meanwhile.
	b.observe(at(clockSpan+11*time.Second), 3)
	if got := b.blockTime(); got != slower || b.first.height != 3 {
		t.Errorf("after the cluster started again: %v from %d", got, b.first.height)
	}
}
