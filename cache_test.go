package crtx

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A crowd of readers shares one computation; an expired value is served
// while one refresh runs; clear forgets.
func TestTTLCache(t *testing.T) {
	c := newTTLCache[int](50*time.Millisecond, 10)
	var calls atomic.Int32
	slow := func() (int, error) {
		time.Sleep(20 * time.Millisecond)
		return int(calls.Add(1)), nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if v, _ := c.fetch("k", time.Now(), slow); v != 1 {
				t.Errorf("first fetch = %d", v)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d computations for one key", calls.Load())
	}
	time.Sleep(60 * time.Millisecond)
	start := time.Now()
	if v, _ := c.fetch("k", time.Now(), slow); v != 1 || time.Since(start) > 10*time.Millisecond {
		t.Errorf("expired fetch = %d after %v; want the stale value at once", v, time.Since(start))
	}
	time.Sleep(40 * time.Millisecond)
	if v, _ := c.fetch("k", time.Now(), slow); v != 2 {
		t.Errorf("after the refresh = %d", v)
	}
	c.clear()
	if v, _ := c.fetch("k", time.Now(), slow); v != 3 {
		t.Errorf("after clear = %d", v)
	}
}

// Equal queries share a cached page whatever their pointers; different
// ones never do.
func TestAgentQueryKey(t *testing.T) {
	half, half2, zero := 0.5, 0.5, 0.0
	n := int64(3)
	base := AgentQuery{Environment: Mainnet, Tags: []string{"sql"}, Sort: SortPriceAsc, Limit: 20}
	a, b := base, base
	a.MinSuccessRate, b.MinSuccessRate = &half, &half2
	if a.key() != b.key() {
		t.Errorf("equal queries have keys %q and %q", a.key(), b.key())
	}
	others := []func(*AgentQuery){
		func(q *AgentQuery) { q.MinSuccessRate = nil },
		func(q *AgentQuery) { q.MinSuccessRate = &zero },
		func(q *AgentQuery) { q.MinExecutions = &n },
		func(q *AgentQuery) { q.Tags = []string{"sql", "data"} },
		func(q *AgentQuery) { q.Tags = []string{"sql,data"} },
		func(q *AgentQuery) { q.VerifiedOnly = true },
		func(q *AgentQuery) { q.Q = "x" },
		func(q *AgentQuery) { q.Tags = []string{"sql data"} },
		func(q *AgentQuery) { q.Q = `|` },
		func(q *AgentQuery) { q.Sort = SortPriceDesc },
		func(q *AgentQuery) { q.Limit = 21 },
		func(q *AgentQuery) { q.Offset = 20 },
		func(q *AgentQuery) { q.Environment = Devnet },
	}
	for i, change := range others {
		c := a
		change(&c)
		if c.key() == a.key() {
			t.Errorf("change %d left the key %q", i, a.key())
		}
	}
}

// A kept page (and every copy of it) is encoded and compressed once; a page
// that is not kept is compressed on each call.
func TestKeptPageCompressedOnce(t *testing.T) {
	var calls atomic.Int32
	compress := func(b []byte) []byte { calls.Add(1); return append([]byte("z:"), b...) }
	kept := AgentPage{Agents: []AgentSummary{{AgentID: "agt_1"}}, Total: 1, Limit: 20}.Kept()
	for _, p := range []AgentPage{kept, kept} {
		b, err := p.CompressedJSON(compress)
		if err != nil || string(b[:2]) != "z:" {
			t.Fatalf("CompressedJSON = %q, %v", b, err)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("kept page compressed %d times", calls.Load())
	}
	kept.encoded = nil
	kept.CompressedJSON(compress)
	kept.CompressedJSON(compress)
	if calls.Load() != 3 {
		t.Fatalf("page not kept: compressed %d times in all, want 3", calls.Load())
	}
}
