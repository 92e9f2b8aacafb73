package market

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// A crowd of readers shares one computation; an expired value is served
// while one refresh runs, before that refresh ends; clear forgets. Time is
// the now each fetch is given: the refresh is held until the stale read has
// returned, so the order is asserted, not a duration.
func TestTTLCache(t *testing.T) {
	c := newTTLCache[int](time.Hour, 10)
	var calls atomic.Int32
	refreshing, release := make(chan struct{}), make(chan struct{})
	compute := func() (int, error) {
		n := calls.Add(1)
		if n == 2 {
			close(refreshing)
			<-release
		}
		return int(n), nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if v, _ := c.fetch("k", time.Now(), compute); v != 1 {
				t.Errorf("first fetch = %d", v)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d computations for one key", calls.Load())
	}
	later := time.Now().Add(2 * time.Hour) // past the TTL
	stale := make(chan int)
	go func() {
		v, _ := c.fetch("k", later, compute)
		stale <- v
	}()
	select {
	case v := <-stale:
		if v != 1 {
			t.Errorf("expired fetch = %d, want the stale 1", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an expired fetch waited for its refresh")
	}
	<-refreshing
	close(release)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if v, _ := c.fetch("k", time.Now(), compute); v == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refresh's value never came")
		}
		runtime.Gosched()
	}
	c.clear()
	if v, _ := c.fetch("k", time.Now(), compute); v != 3 {
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
