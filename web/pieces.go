package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/sse"
)

// runPieces streams a running run's result to its agent page as the agent
// writes it: a delta event for each piece, its id counting them, so that
// the page's EventSource, reconnecting, resumes after the last it showed.
// It ends, with an end event that tells the page to stop, once this
// replica holds the run's pieces no more; the page's poll then shows the
// run as it ended (docs/streaming.md).
func (h *Handler) runPieces(w http.ResponseWriter, r *http.Request, v visit) error {
	e, _, err := h.ownExecution(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	n = max(n, 0)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(ev sse.Event) {
		sse.Write(w, ev)
		if flusher != nil {
			flusher.Flush()
		}
	}
	h.market.Executions.Pieces(r.Context(), e.ID, n, func(text string) {
		n++
		b, _ := json.Marshal(crtx.Delta{Text: text})
		send(sse.Event{ID: strconv.Itoa(n), Name: crtx.EventDelta, Data: b})
	})
	send(sse.Event{Name: "end", Data: []byte("{}")})
	return nil
}
