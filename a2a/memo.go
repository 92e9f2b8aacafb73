package a2a

import (
	"context"
	"sync"
	"time"
)

// latencyTTL is how long an agent's latency percentiles are kept. Reading
// them reads up to a thousand execution rows, and the card is public and
// unauthenticated: without this, anyone could make the database read them
// for every request. Percentiles over a thousand calls move slowly anyway.
const latencyTTL = 10 * time.Second

// memo keeps one value per key for ttl, computing each once however many
// requests want it at the same moment. It stays small by forgetting the
// finished entries when it holds max.
type memo[V any] struct {
	mu      sync.Mutex
	ttl     time.Duration
	max     int
	entries map[string]*memoEntry[V]
}

type memoEntry[V any] struct {
	done chan struct{} // closed when v, err and at are set
	v    V
	err  error
	at   time.Time
}

func newMemo[V any](ttl time.Duration, max int) *memo[V] {
	return &memo[V]{ttl: ttl, max: max, entries: map[string]*memoEntry[V]{}}
}

// get returns key's value, computing it with fn when there is none younger
// than ttl. fn runs detached from ctx: the requests that wait for it
// share it, and one giving up must not fail the others.
func (c *memo[V]) get(ctx context.Context, key string, fn func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		select {
		case <-e.done:
			if e.err == nil && time.Since(e.at) < c.ttl {
				c.mu.Unlock()
				return e.v, nil
			}
		default:
			c.mu.Unlock()
			select {
			case <-e.done:
				return e.v, e.err
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
		}
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			select {
			case <-e.done:
				delete(c.entries, k)
			default:
			}
		}
	}
	e := &memoEntry[V]{done: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	e.v, e.err = fn(context.WithoutCancel(ctx))
	e.at = time.Now()
	close(e.done)
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
	return e.v, e.err
}
