package http

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/sse"
)

// A streamed call (docs/streaming.md) is answered as Server-Sent Events:
// a delta event for each piece as the creator writes it, then one event
// named by the execution's final status whose data is its record. The
// answer starts with the first piece: a call refused or failed before any
// piece came is answered as an unstreamed one (a JSON error), as OpenAI's
// streams are.

// wantsStream reports a synchronous execute request that asks for a
// stream: "stream": true, or Accept: text/event-stream.
func wantsStream(r *http.Request, in crtx.ExecuteParams) bool {
	if in.Async {
		return false
	}
	if in.Stream {
		return true
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && t == "text/event-stream" {
			return true
		}
	}
	return false
}

// streamAnswer writes a streamed call's events; n counts them, as their
// ids.
type streamAnswer struct {
	w       http.ResponseWriter
	n       int
	started bool
}

func (a *streamAnswer) start() {
	if a.started {
		return
	}
	a.started = true
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	a.w.WriteHeader(http.StatusOK)
}

// write sends one event and flushes it. A caller that hung up is not
// written to; the call goes on, and its record keeps the answer.
func (a *streamAnswer) write(name string, data []byte) {
	a.start()
	a.n++
	sse.Write(a.w, sse.Event{ID: strconv.Itoa(a.n), Name: name, Data: data})
	if f, ok := a.w.(http.Flusher); ok {
		f.Flush()
	}
}

// relay is what the call's pieces go through (ExecuteParams.Deltas): the
// goroutine that runs the call never waits on this caller. finish, once
// the call has returned, waits for the last piece to be written.
func (a *streamAnswer) relay(ctx context.Context) (deltas func(executionID, text string), finish func()) {
	r := gate.NewRelay()
	return r.Add, r.Start(ctx, func(p gate.Piece) { a.delta(p.ExecutionID, p.Text) })
}

// delta writes one piece. The stream's headers, sent with the first
// piece, name the execution: a caller whose stream is cut reads it by
// that id.
func (a *streamAnswer) delta(executionID, text string) {
	if !a.started {
		a.w.Header().Set("X-Crtx-Execution-Id", executionID)
	}
	b, _ := json.Marshal(crtx.Delta{Text: text})
	a.write(crtx.EventDelta, b)
}

// end answers the call as it ended: its last event, once the stream has
// begun or when it has a result (completed, or disputed since: a result
// that came whole is one delta); false for one that failed before its
// first piece, for the caller to answer unstreamed.
func (a *streamAnswer) end(e crtx.Execution, result string, l crtx.Links) bool {
	if !a.started && e.Status == crtx.ExecFailed {
		return false
	}
	if !a.started && result != "" {
		a.delta(e.ID, result)
	}
	b, _ := json.Marshal(api.NewExecutionRecord(e, result, l))
	a.write(string(e.Status), b)
	return true
}

// answerStream answers a streamed execute request: the stream's last event,
// or, when none began, as answerExecution does.
func (s *Server) answerStream(w http.ResponseWriter, r *http.Request, a *streamAnswer, e crtx.Execution, err error, idem string) error {
	if err != nil || !e.Status.Final() {
		if !a.started {
			// A replay, a refusal, a call that did not end here: as an
			// unstreamed request is answered.
			return s.answerExecution(w, r, e, err, idem)
		}
		return s.endWithError(w, r, a, unended(e, err))
	}
	result, rerr := s.result(r, e)
	if rerr != nil {
		if a.started {
			return s.endWithError(w, r, a, rerr)
		}
		return rerr
	}
	if !a.end(e, result, s.market.Links()) {
		return s.answerExecution(w, r, e, err, idem)
	}
	// A retry with the key reads the call's answer as an unstreamed request
	// would have had it.
	status, body := s.execResponse(r.Context(), e, result)
	s.keepAnswer(r, e, idem, status, body)
	return nil
}

// endWithError ends a stream that has begun with an error event, whose
// data is the error body: once begun, a stream ends with an event, never
// a body.
func (s *Server) endWithError(w http.ResponseWriter, r *http.Request, a *streamAnswer, err error) error {
	_, body := s.gate.Refusal(w, r, err)
	b, _ := json.Marshal(body)
	a.write("error", b)
	return nil
}

// unended is why a streamed call's stream ends without its record: err,
// or the call did not end on this replica (it is followed by its id).
func unended(e crtx.Execution, err error) error {
	if err != nil {
		return err
	}
	return &crtx.Error{Code: crtx.CodeUnavailable, ExecutionID: e.ID, RetryAfter: 5,
		Message: "the call has not ended here; resume its stream, or read execution " + e.ID + ", for its answer"}
}

// resumeStream resumes a streamed call whose stream was cut: the pieces
// after Last-Event-ID (the last delta's id the caller read), as the
// replica that runs the call holds them, then the call's last event, once
// it ends. Elsewhere, or some seconds after the call ended, the pieces are
// gone: the last event then holds the whole result (and a caller that read
// none gets it as one delta first).
func (s *Server) resumeStream(w http.ResponseWriter, r *http.Request) error {
	e, _, release, err := s.followed(r)
	if err != nil {
		return err
	}
	defer release()
	after := 0
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if after, err = strconv.Atoi(id); err != nil || after < 0 {
			return crtx.Errorf(crtx.CodeInvalidRequest, "Last-Event-ID: %q is not the id of a delta event this stream sent", id)
		}
	}
	w.Header().Set("X-Crtx-Execution-Id", e.ID)
	a := &streamAnswer{w: w, n: after}
	s.market.Executions.Pieces(r.Context(), e.ID, after, func(text string) { a.delta(e.ID, text) })
	if r.Context().Err() != nil {
		return nil
	}
	e, result, err := s.market.Executions.Follow(r.Context(), e, nil)
	if err != nil {
		if r.Context().Err() != nil {
			return nil
		}
		return err
	}
	if after > 0 || a.started {
		// The caller holds pieces already: the record ends its stream.
		b, _ := json.Marshal(api.NewExecutionRecord(e, result, s.market.Links()))
		a.write(string(e.Status), b)
		return nil
	}
	if !a.end(e, result, s.market.Links()) {
		// Failed before any piece: as a stream that never began.
		return &crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID}
	}
	return nil
}
