package market

import (
	"context"
	"sync"
	"time"
)

// pieces are the streamed results of the executions this process runs,
// kept while each runs: a stream cut short resumes from them
// (Executions.Pieces) on the replica that runs its call. An execution's
// pieces go shortly after it is closed (endedPieces): its record then
// holds the whole result.
type pieces struct {
	mu sync.Mutex
	by map[string]*pieceLog
}

// endedPieces is how long a call's pieces are kept once it has ended: a
// stream that waits for the next piece is woken by the end, and reads the
// pieces that came just before it, which it would otherwise miss.
const endedPieces = 5 * time.Second

// pieceLog is one execution's pieces; changed is closed, and replaced, by
// each piece, and closed by the end.
type pieceLog struct {
	texts   []string
	changed chan struct{}
	ended   bool
}

func (p *pieces) add(id, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.by[id]
	if l == nil || l.ended {
		// A call run again (taken over after it ended here) starts anew.
		l = &pieceLog{changed: make(chan struct{})}
		p.by[id] = l
	}
	l.texts = append(l.texts, text)
	close(l.changed)
	l.changed = make(chan struct{})
}

// end marks id's pieces ended, waking whoever waits for the next, and
// forgets them after endedPieces.
func (p *pieces) end(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.by[id]
	if l == nil || l.ended {
		return
	}
	l.ended = true
	close(l.changed)
	time.AfterFunc(endedPieces, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.by[id] == l {
			delete(p.by, id)
		}
	})
}

// drop forgets id's pieces at once, waking whoever waits for the next: a
// run that lost its call to another replica, whose pieces may not be
// those of the result that replica's run ends with.
func (p *pieces) drop(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.by[id]; l != nil {
		if !l.ended {
			close(l.changed)
		}
		delete(p.by, id)
	}
}

// Pieces gives fn the pieces of execution id's streamed result after the
// first n, each as it comes, for as long as this process runs its call
// and holds them, or until ctx ends; once the call has ended, those it
// still holds (endedPieces). It returns at once when it holds none (the
// call ended a while ago, runs on another replica, or its creator does
// not stream): the caller then reads its record. The caller has read id under
// the principal it serves.
func (m *Executions) Pieces(ctx context.Context, id string, n int, fn func(text string)) {
	for {
		texts, next, held := m.streamed.since(id, n)
		for _, t := range texts {
			fn(t)
		}
		n += len(texts)
		if !held {
			return
		}
		select {
		case <-next:
		case <-ctx.Done():
			return
		}
	}
}

// since returns id's pieces after the first n, and a channel closed at its
// next piece or its end; held is false once they have ended, or when there
// are none here.
func (p *pieces) since(id string, n int) (texts []string, next <-chan struct{}, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.by[id]
	if l == nil {
		return nil, nil, false
	}
	if n < len(l.texts) {
		texts = append(texts, l.texts[max(n, 0):]...)
	}
	return texts, l.changed, !l.ended
}
