package http

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// Limits configure abuse protection. Each replica keeps its own counts.
type Limits struct {
	// PerIP is the requests per second one client address may make to
	// sign-in and the devnet airdrop (bursts of twice that); 0 is off.
	PerIP float64
	// PerKey is the requests per second one API key may make; 0 is off,
	// the default, since the seed limits a key only by what its wallet
	// can pay.
	PerKey float64
	// Payments is how many x402 payments a second the marketplace
	// simulates, all payers together (each also at PerIP's rate): each
	// costs an RPC call. 0 is off.
	Payments float64
	// StreamsPerKey caps one key's streams open at once: the events of
	// executions, A2A streams and MCP tasks/result calls; 0 is off.
	StreamsPerKey int
}

// bucket is a token bucket.
type bucket struct {
	tokens float64
	last   time.Time
}

// limiter counts requests per name with token buckets.
type limiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[string]*bucket
}

func newLimiter(rate float64) *limiter {
	return &limiter{rate: rate, burst: math.Max(2*rate, 1), buckets: map[string]*bucket{}}
}

// allow takes a token for name, or says how many seconds until one is there.
func (l *limiter) allow(name string, now time.Time) (bool, int) {
	if l == nil || l.rate <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.fill(name, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, l.wait(b)
}

// peek says how many seconds until name has a token, 0 when it has one,
// without taking it.
func (l *limiter) peek(name string, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.fill(name, now); b.tokens < 1 {
		return l.wait(b)
	}
	return 0
}

// charge takes a token from name, below none if need be: what raced past
// peek waits the longer for it.
func (l *limiter) charge(name string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fill(name, now).tokens--
}

// fill is name's bucket with what it earned since it was last used; l.mu
// is held.
func (l *limiter) fill(name string, now time.Time) *bucket {
	if len(l.buckets) > 100_000 { // forget idle names rather than grow without end
		for k, b := range l.buckets {
			if now.Sub(b.last) > time.Minute {
				delete(l.buckets, k)
			}
		}
	}
	b, ok := l.buckets[name]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[name] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	return b
}

// wait is the seconds until b holds a token.
func (l *limiter) wait(b *bucket) int { return int(math.Ceil((1 - b.tokens) / l.rate)) }

// inflight counts what each key holds open at once (streams).
type inflight struct {
	mu  sync.Mutex
	max int
	n   map[string]int
}

// admit takes one of key's slots, or refuses with rate_limited, its
// message naming the limit; release gives the slot back.
func (f *inflight) admit(key, format string) (release func(), err error) {
	if !f.acquire(key) {
		return nil, rateLimited(1, format, f.max)
	}
	return func() { f.release(key) }, nil
}

func (f *inflight) acquire(key string) bool {
	if f.max <= 0 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key] >= f.max {
		return false
	}
	f.n[key]++
	return true
}

func (f *inflight) release(key string) {
	if f.max <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key]--; f.n[key] <= 0 {
		delete(f.n, key)
	}
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func rateLimited(retry int, format string, args ...any) error {
	e := crtx.Errorf(crtx.CodeRateLimited, format, args...)
	e.RetryAfter = max(retry, 1)
	return e
}

// limitIP guards sign-in and the airdrop per client address.
func (s *Server) limitIP(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if ok, retry := s.perIP.allow(clientIP(r), s.market.Now()); !ok {
			return rateLimited(retry, "too many requests from this address; try again in %d seconds", max(retry, 1))
		}
		return h(w, r)
	}
}

// limitKey applies the per-key rate to a request made with an API key.
func (s *Server) limitKey(p crtx.Principal) error {
	if p.Key == nil {
		return nil
	}
	if ok, retry := s.perKey.allow(p.Key.ID, s.market.Now()); !ok {
		return rateLimited(retry, "this API key is over its rate limit; try again in %d seconds", max(retry, 1))
	}
	return nil
}
