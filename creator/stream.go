package creator

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/sse"
)

// pieces are what a StreamFunc yielded: add is its yield, since hands the
// ones not handed yet to the handler's goroutine, and end closes them and
// returns them joined. A piece yielded after the end goes nowhere.
type pieces struct {
	mu    sync.Mutex
	all   []string
	given int
	ended bool
	more  chan struct{}
}

func (p *pieces) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended || s == "" {
		return
	}
	p.all = append(p.all, s)
	select {
	case p.more <- struct{}{}:
	default:
	}
}

func (p *pieces) since() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.all[p.given:]
	p.given = len(p.all)
	return out
}

func (p *pieces) end() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	return strings.Join(p.all, "")
}

// accepts reports whether r's Accept header names media type t.
func accepts(r *http.Request, t string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == t {
			return true
		}
	}
	return false
}

// stream answers the first request for an execution as Server-Sent
// Events: a delta event for each piece as it comes, then the result event
// with the signed reply, which a keeps to answer a retry with.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, in crtx.CreatorRequest, a *answer) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	n := 0
	// A marketplace that hung up is not written to; the work goes on, and
	// its answer waits for the retry.
	sent := func(piece string) {
		if r.Context().Err() != nil {
			return
		}
		n++
		data, _ := json.Marshal(crtx.Delta{Text: piece})
		sse.Write(w, sse.Event{ID: strconv.Itoa(n), Name: crtx.EventDelta, Data: data})
		if flusher != nil {
			flusher.Flush()
		}
	}
	a.body = h.run(r.Context(), in, r.Header, sent)
	close(a.done)
	if r.Context().Err() == nil {
		sse.Write(w, sse.Event{Name: crtx.EventResult, Data: a.body})
	}
}
