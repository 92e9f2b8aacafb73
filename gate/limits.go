package gate

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

// Limiter counts requests per name with token buckets.
type Limiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[string]*bucket
}

// NewLimiter allows each name rate requests a second, in bursts of up to
// burst; a rate of 0 allows everything.
func NewLimiter(rate, burst float64) *Limiter {
	return &Limiter{rate: rate, burst: burst, buckets: map[string]*bucket{}}
}

// perSecond is a limiter of rate requests a second in bursts of twice that.
func perSecond(rate float64) *Limiter { return NewLimiter(rate, math.Max(2*rate, 1)) }

// bucket is a token bucket.
type bucket struct {
	tokens float64
	last   time.Time
}

// Allow takes a token for name, or says how many seconds until one is there.
func (l *Limiter) Allow(name string, now time.Time) (bool, int) {
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

// Peek says how many seconds until name has a token, 0 when it has one,
// without taking it.
func (l *Limiter) Peek(name string, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.fill(name, now); b.tokens < 1 {
		return l.wait(b)
	}
	return 0
}

// Charge takes a token from name, below none if need be: what raced past
// Peek waits the longer for it.
func (l *Limiter) Charge(name string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fill(name, now).tokens--
}

// fill is name's bucket with what it earned since it was last used; l.mu
// is held.
func (l *Limiter) fill(name string, now time.Time) *bucket {
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
func (l *Limiter) wait(b *bucket) int { return int(math.Ceil((1 - b.tokens) / l.rate)) }

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
		return nil, RateLimited(1, format, f.max)
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

// ClientIP is the address r came from, as the limits count it.
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// RateLimited is the rate_limited refusal whose caller may try again in
// retry seconds.
func RateLimited(retry int, format string, args ...any) error {
	e := crtx.Errorf(crtx.CodeRateLimited, format, args...)
	e.RetryAfter = max(retry, 1)
	return e
}

// LimitAddress counts r against its client address's rate: sign-in, the
// airdrop, deposits and the OAuth endpoints are guarded so.
func (g *Gate) LimitAddress(r *http.Request) error {
	if ok, retry := g.perIP.Allow(ClientIP(r), g.market.Now()); !ok {
		return RateLimited(retry, "too many requests from this address; try again in %d seconds", max(retry, 1))
	}
	return nil
}

// Limit counts one more request of p's key against the key's rate limit.
// A protocol whose one HTTP request carries several calls (an MCP batch)
// counts each, as that many REST requests would be.
func (g *Gate) Limit(p crtx.Principal) error {
	if p.Key == nil {
		return nil
	}
	if ok, retry := g.perKey.Allow(p.Key.ID, g.market.Now()); !ok {
		return RateLimited(retry, "this API key is over its rate limit; try again in %d seconds", max(retry, 1))
	}
	return nil
}

// AdmitStream takes one of the key's stream slots, or refuses when all are
// taken; release gives the slot back.
func (g *Gate) AdmitStream(keyID string) (release func(), err error) {
	return g.streams.admit(keyID, "this API key has %d streams open, its limit; close one first")
}
