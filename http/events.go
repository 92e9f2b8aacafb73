package http

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// events streams an execution's status changes as Server-Sent Events, one
// event per change with the record as data, and ends after the final one.
// It reads the database, so it works whichever replica made the change.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	p, err := s.apiKey(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	e, result, err := s.market.GetExecution(r.Context(), p, id)
	if err != nil {
		return err
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	last := ""
	seq := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		if string(e.Status) != last {
			last = string(e.Status)
			seq++
			b, _ := json.Marshal(s.market.Record(e, result))
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", seq, e.Status, b)
			if flusher != nil {
				flusher.Flush()
			}
			if e.Status.Final() {
				return nil
			}
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			if flusher != nil {
				flusher.Flush()
			}
		case <-tick.C:
		}
		if e, result, err = s.market.GetExecution(r.Context(), p, id); err != nil {
			s.log.Warn("events", "request_id", requestID(r), "err", err)
			return nil
		}
	}
}
