package market

import (
	"sync"
)

// pieces are the streamed results of the executions this process runs,
// kept while each runs: a stream cut short resumes from them
// (Executions.Pieces) on the replica that runs its call. An execution's
// pieces go once it is closed: its record then holds the whole result.
type pieces struct {
	mu sync.Mutex
	by map[string]*pieceLog
}

// pieceLog is one execution's pieces; changed is closed, and replaced, by
// each piece, and closed by the end.
type pieceLog struct {
	texts   []string
	changed chan struct{}
}

func (p *pieces) add(id, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.by[id]
	if l == nil {
		l = &pieceLog{changed: make(chan struct{})}
		p.by[id] = l
	}
	l.texts = append(l.texts, text)
	close(l.changed)
	l.changed = make(chan struct{})
}

// end forgets id's pieces, waking whoever waits for the next.
func (p *pieces) end(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.by[id]; l != nil {
		close(l.changed)
		delete(p.by, id)
	}
}

// Pieces returns the pieces of execution id's streamed result after the
// first n, and a channel closed at its next piece or when its call ends;
// held is false when this process holds none of its pieces (its call has
// ended, runs on another replica, or its creator has not streamed yet or
// does not stream), and the caller waits for its record instead. The
// caller has read id under the principal it serves.
func (m *Executions) Pieces(id string, n int) (texts []string, next <-chan struct{}, held bool) {
	m.streamed.mu.Lock()
	defer m.streamed.mu.Unlock()
	l := m.streamed.by[id]
	if l == nil {
		return nil, nil, false
	}
	if n < len(l.texts) {
		texts = append(texts, l.texts[max(n, 0):]...)
	}
	return texts, l.changed, true
}
