package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/sse"
)

// chat runs the agent the request names as its model, on the task its
// messages make (task), and answers a chat completion, or streams one.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Caller(r)
	if err != nil {
		return err
	}
	var in chatRequest
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return crtx.Errorf(crtx.CodeInvalidRequest, "the body is not a chat completion request in JSON: %v", err)
	}
	if in.Model == "" {
		return crtx.InvalidField("model", "the agent id to run is required")
	}
	task, err := taskOf(in.Messages)
	if err != nil {
		return err
	}
	params := crtx.ExecuteParams{Task: task, Parameters: in.Parameters, Private: in.Private}
	for _, m := range []struct {
		name string
		from *json.Number
		to   **crtx.USDC
	}{{"max_cost_usdc", in.MaxCost, &params.MaxCost}, {"max_price_usdc", in.MaxPrice, &params.MaxPrice}} {
		if m.from == nil {
			continue
		}
		v, err := crtx.ParseUSDC(m.from.String())
		if err != nil {
			return crtx.InvalidField(m.name, "%v", err)
		}
		*m.to = &v
	}
	if !in.Stream {
		e, err := s.market.Executions.Execute(r.Context(), p, in.Model, params, "", "")
		if err != nil {
			return err
		}
		return s.answer(w, r, e)
	}
	st := &stream{w: w, model: in.Model, usage: in.StreamOptions != nil && in.StreamOptions.IncludeUsage, created: s.market.Now().Unix()}
	// The call's pieces reach this caller through a relay: the goroutine
	// that runs the call never waits on it.
	relay := gate.NewRelay()
	finish := relay.Start(r.Context(), func(p gate.Piece) { st.piece(p.ExecutionID, p.Text) })
	params.Stream, params.Deltas = true, relay.Add
	e, err := s.market.Executions.Execute(r.Context(), p, in.Model, params, "", "")
	finish()
	if err != nil && !st.started {
		return err
	}
	return s.end(w, r, st, e)
}

// taskOf is the task a conversation makes: its last message, which must be
// the user's, alone; or, when there are turns before it (a system prompt,
// earlier questions and answers), the whole conversation, each turn as
// "role: text" and the turns apart by a blank line, the last user's last.
func taskOf(msgs []message) (string, error) {
	if len(msgs) == 0 {
		return "", crtx.InvalidField("messages", "at least one message is required")
	}
	if msgs[len(msgs)-1].Role != "user" {
		return "", crtx.InvalidField("messages", "the last message must be the user's")
	}
	turns := make([]string, len(msgs))
	for i, m := range msgs {
		text, err := textOf(m.Content)
		if err != nil {
			return "", crtx.InvalidField("messages", "[%d].content: %s", i, crtx.ErrorMessage(err))
		}
		turns[i] = m.Role + ": " + text
		if len(msgs) == 1 {
			return text, nil
		}
	}
	return strings.Join(turns, "\n\n"), nil
}

// textOf is a message's text: its content string, or its text parts
// joined by a new line.
func textOf(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", crtx.Errorf(crtx.CodeInvalidRequest, "a string, or an array of text parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "text" {
			return "", crtx.Errorf(crtx.CodeInvalidRequest, "a %q part: agents take text", p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// completionID is a completion's id: its execution's, in OpenAI's form.
func completionID(executionID string) string { return "chatcmpl-" + executionID }

// executionOf is what crtx adds to an answer about e.
func (s *Server) executionOf(e crtx.Execution, result string) execution {
	rec := api.NewExecutionRecord(e, result, s.market.Links())
	return execution{ExecutionID: e.ID, Cost: json.Number(e.Cost.String()), ResultHash: rec.ResultHash, Record: rec.OnChainRecord,
		Metered: rec.Metered}
}

func usageOf(e crtx.Execution) usage {
	var n int64
	if e.TokensUsed != nil {
		n = *e.TokensUsed
	}
	return usage{CompletionTokens: n, TotalTokens: n}
}

// answer is a synchronous call's chat completion, or its failure as an
// error.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, e crtx.Execution) error {
	w.Header().Set("X-Crtx-Execution-Id", e.ID)
	if e.Status != crtx.ExecCompleted {
		return unfinished(e)
	}
	result, err := s.result(r, e)
	if err != nil {
		return err
	}
	gate.WriteJSON(w, http.StatusOK, completion{ID: completionID(e.ID), Object: "chat.completion", Created: e.InitiatedAt.Unix(), Model: e.AgentID,
		Choices: []choice{{Message: choiceMessage{Role: "assistant", Content: result}, FinishReason: "stop"}},
		Usage:   usageOf(e), Crtx: s.executionOf(e, result)})
	return nil
}

// unfinished is the error a call that did not complete answers.
func unfinished(e crtx.Execution) error {
	if e.Status == crtx.ExecFailed {
		return &crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID}
	}
	return &crtx.Error{Code: crtx.CodeUnavailable, ExecutionID: e.ID, RetryAfter: 5,
		Message: "the call has not ended here; read execution " + e.ID + " for its answer"}
}

func (s *Server) result(r *http.Request, e crtx.Execution) (string, error) {
	if e.ResultCID != "" && e.Result == "" {
		return s.market.Executions.ExecutionResult(r.Context(), e)
	}
	return e.Result, nil
}

// stream writes a streamed completion: chunks as the creator writes, as
// OpenAI's streams are framed (data lines, then "[DONE]").
type stream struct {
	w       http.ResponseWriter
	model   string
	usage   bool
	started bool
	sent    int
	// id and created name the stream's chunks: the completion's id is
	// the execution's, known with the first piece.
	id      string
	created int64
}

// write writes one chunk's JSON as a data event, and flushes it.
func (st *stream) write(v any) {
	if !st.started {
		st.started = true
		h := st.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		st.w.WriteHeader(http.StatusOK)
	}
	b, _ := json.Marshal(v)
	sse.Write(st.w, sse.Event{Data: b})
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *stream) chunk(d delta, finish *string) chunk {
	return chunk{ID: st.id, Object: "chat.completion.chunk", Created: st.created, Model: st.model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
}

// piece is ExecuteParams.Deltas: the first piece is preceded by the
// assistant's role, as OpenAI's first chunk carries it, and the headers
// name the execution.
func (st *stream) piece(executionID, text string) {
	if !st.started {
		st.id = completionID(executionID)
		st.w.Header().Set("X-Crtx-Execution-Id", executionID)
		empty := ""
		st.write(st.chunk(delta{Role: "assistant", Content: &empty}, nil))
	}
	st.write(st.chunk(delta{Content: &text}, nil))
	st.sent++
}

// end ends a streamed call: a completed one's last chunk (the whole result
// as one piece when none came), its usage when asked, and [DONE]; a
// failed one, once chunks went out, an error event as OpenAI's clients
// read one; before any, the error itself.
func (s *Server) end(w http.ResponseWriter, r *http.Request, st *stream, e crtx.Execution) error {
	if !st.started {
		w.Header().Set("X-Crtx-Execution-Id", e.ID)
	}
	if e.Status != crtx.ExecCompleted {
		err := unfinished(e)
		if !st.started {
			return err
		}
		_, body := s.refusal(w, r, err)
		st.write(body)
		return nil
	}
	result, err := s.result(r, e)
	if err != nil {
		if !st.started {
			return err
		}
		_, body := s.refusal(w, r, err)
		st.write(body)
		return nil
	}
	if st.sent == 0 {
		st.piece(e.ID, result)
	}
	stop := "stop"
	x := s.executionOf(e, result)
	last := st.chunk(delta{}, &stop)
	last.Crtx = &x
	st.write(last)
	if st.usage {
		u := usageOf(e)
		st.write(chunk{ID: st.id, Object: "chat.completion.chunk", Created: st.created, Model: st.model, Choices: []chunkChoice{}, Usage: &u})
	}
	io.WriteString(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}
