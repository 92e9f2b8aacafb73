package market

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
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
	base := crtx.AgentQuery{Environment: crtx.Mainnet, Tags: []string{"sql"}, Sort: crtx.SortPriceAsc, Limit: 20}
	a, b := base, base
	a.MinSuccessRate, b.MinSuccessRate = &half, &half2
	if queryKey(a) != queryKey(b) {
		t.Errorf("equal queries have keys %q and %q", queryKey(a), queryKey(b))
	}
	others := []func(*crtx.AgentQuery){
		func(q *crtx.AgentQuery) { q.MinSuccessRate = nil },
		func(q *crtx.AgentQuery) { q.MinSuccessRate = &zero },
		func(q *crtx.AgentQuery) { q.MinExecutions = &n },
		func(q *crtx.AgentQuery) { q.Tags = []string{"sql", "data"} },
		func(q *crtx.AgentQuery) { q.Tags = []string{"sql,data"} },
		func(q *crtx.AgentQuery) { q.VerifiedOnly = true },
		func(q *crtx.AgentQuery) { q.Q = "x" },
		func(q *crtx.AgentQuery) { q.Tags = []string{"sql data"} },
		func(q *crtx.AgentQuery) { q.Q = `|` },
		func(q *crtx.AgentQuery) { q.Sort = crtx.SortPriceDesc },
		func(q *crtx.AgentQuery) { q.Limit = 21 },
		func(q *crtx.AgentQuery) { q.Offset = 20 },
		func(q *crtx.AgentQuery) { q.Environment = crtx.Devnet },
	}
	for i, change := range others {
		c := a
		change(&c)
		if queryKey(c) == queryKey(a) {
			t.Errorf("change %d left the key %q", i, queryKey(a))
		}
	}
}
