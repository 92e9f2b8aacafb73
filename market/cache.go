package market

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ttlCache keeps values for a short while. The catalog changes rarely and
// is read on every browse, so its pages are kept for a second; compiled
// schemas are kept until the cache fills. It stays small by forgetting
// everything when full.
type ttlCache[V any] struct {
	mu      sync.Mutex
	ttl     time.Duration
	max     int
	entries map[string]ttlEntry[V]
	flights map[string]*flight[V]
}

type ttlEntry[V any] struct {
	v  V
	at time.Time
}

// flight is one computation of a key that others may wait for.
type flight[V any] struct {
	done chan struct{}
	v    V
	err  error
}

func newTTLCache[V any](ttl time.Duration, max int) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, entries: map[string]ttlEntry[V]{}, flights: map[string]*flight[V]{}}
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || (c.ttl > 0 && now.Sub(e.at) >= c.ttl) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(key string, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		c.entries = map[string]ttlEntry[V]{}
	}
	c.entries[key] = ttlEntry[V]{v, now}
}

// fetch returns the value of key, computing it with fn when it is missing.
// An expired value is returned as it is while one refresh runs in the
// background, and callers that find nothing share one computation: a
// crowd of readers never recomputes the same thing at once.
func (c *ttlCache[V]) fetch(key string, now time.Time, fn func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	f := c.flights[key]
	if ok && (c.ttl == 0 || now.Sub(e.at) < c.ttl) {
		c.mu.Unlock()
		return e.v, nil
	}
	if f == nil {
		f = &flight[V]{done: make(chan struct{})}
		c.flights[key] = f
		go func() {
			f.v, f.err = fn()
			c.mu.Lock()
			if f.err == nil {
				if len(c.entries) >= c.max {
					c.entries = map[string]ttlEntry[V]{}
				}
				c.entries[key] = ttlEntry[V]{f.v, time.Now()}
			}
			delete(c.flights, key)
			c.mu.Unlock()
			close(f.done)
		}()
	}
	c.mu.Unlock()
	if ok {
		return e.v, nil // stale while the refresh runs
	}
	<-f.done
	return f.v, f.err
}

// forget drops one key.
func (c *ttlCache[V]) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

func (c *ttlCache[V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[string]ttlEntry[V]{}
}

// totalTTL is how long a catalog count is kept: a page's total may lag its
// agents by this much when another replica changed a listing.
const totalTTL = 5 * time.Second

// catalogChanged forgets the cached catalog pages after this process
// changed a listing; other replicas' copies age out within a second.
func (m *core) catalogChanged() {
	m.pages.clear()
	m.totals.clear()
	m.tags.clear()
	m.figures.clear()
	m.agentCache.clear()
}

// keyCacheTTL is how long an API key read for authentication is kept: a
// key revoked on another replica may authenticate reads (never charge an
// execution) for this long.
const keyCacheTTL = 2 * time.Second

// compiled returns the compiled form of an agent's input schema.
func (m *core) compiled(schema json.RawMessage) (*jsonschema.Schema, error) {
	if s, ok := m.schemas.get(string(schema), time.Time{}); ok {
		return s, nil
	}
	s, err := CompileSchema(schema)
	if err == nil {
		m.schemas.put(string(schema), s, time.Time{})
	}
	return s, err
}
