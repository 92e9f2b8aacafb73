package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
)

// keepAlive is how long an events stream stays silent before it sends a
// comment, so that proxies do not close it as idle.
const keepAlive = 15 * time.Second

// events streams an execution's status changes as Server-Sent Events, one
// event per change with the record as data, and ends after the final one.
// It waits to be told of a change (market.Follower), whichever replica
// made it, rather than reading the execution over and over.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	e, result, release, err := s.followed(r)
	if err != nil {
		return err
	}
	defer release()
	f := s.market.Executions.Watch(e)
	defer f.Close()
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	last := ""
	seq := 0
	for {
		if string(e.Status) != last {
			last = string(e.Status)
			seq++
			b, _ := json.Marshal(api.NewExecutionRecord(e, result, s.market.Links()))
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", seq, e.Status, b)
			flush()
			if e.Status.Final() {
				return nil
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), keepAlive)
		e, result, err = f.Next(ctx)
		cancel()
		switch {
		case r.Context().Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			fmt.Fprint(w, ": keep-alive\n\n")
			flush()
		case err != nil:
			s.log.Warn("events", "request_id", gate.RequestID(r), "err", err)
			return nil
		}
	}
}

// followed is the execution a stream of r follows, read with the API key
// r carries, within one of the key's stream slots, which release gives
// back.
func (s *Server) followed(r *http.Request) (crtx.Execution, string, func(), error) {
	p, err := s.gate.APIKey(r)
	if err != nil {
		return crtx.Execution{}, "", nil, err
	}
	release, err := s.gate.AdmitStream(p.Key.ID)
	if err != nil {
		return crtx.Execution{}, "", nil, err
	}
	e, result, err := s.market.Executions.GetExecution(r.Context(), p, r.PathValue("execution_id"))
	if err != nil {
		release()
		return crtx.Execution{}, "", nil, err
	}
	return e, result, release, nil
}
