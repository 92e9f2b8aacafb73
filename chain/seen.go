package chain

import (
	"sync"

	"github.com/gagliardetto/solana-go"
)

// seenSize is how many transactions a Client remembers having examined.
const seenSize = 1 << 14

// seen remembers examined transactions, at most about 2×size: when the
// newer half fills, it becomes the older one and the oldest are forgotten
// (a forgotten one is fetched again, once).
type seen struct {
	mu       sync.Mutex
	size     int
	cur, old map[solana.Signature]examined
}

func newSeen(size int) *seen {
	return &seen{size: size, cur: map[solana.Signature]examined{}}
}

func (s *seen) get(sig solana.Signature) (examined, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.cur[sig]; ok {
		return e, true
	}
	e, ok := s.old[sig]
	return e, ok
}

func (s *seen) put(sig solana.Signature, e examined) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cur) >= s.size {
		s.old, s.cur = s.cur, map[solana.Signature]examined{}
	}
	s.cur[sig] = e
}
