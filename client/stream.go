package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/sse"
)

// maxStream bounds what a streamed answer may hold: a result's pieces and
// its record, which repeats the result.
const maxStream = 64 << 20

// ExecuteStream runs a synchronous call as a stream (docs/streaming.md):
// each piece of the result is given to delta as the creator writes it, and
// the record is returned once the call ends. A call that failed is
// returned with its record and an *Error, as Execute's, after whatever
// pieces it sent; one refused before it began, with the *Error alone. A
// stream cut before its end is a *StreamCut, which ResumeStream picks up.
func (c *Client) ExecuteStream(ctx context.Context, agentID string, p crtx.ExecuteParams, o ExecuteOptions, delta func(text string)) (api.ExecutionRecord, error) {
	var out api.ExecutionRecord
	p.Stream, p.Async = true, false
	body, err := json.Marshal(p)
	if err != nil {
		return out, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/agents/"+url.PathEscape(agentID)+"/execute", bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if o.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", o.IdempotencyKey)
	}
	return c.stream(req, 0, delta, nil)
}

// ResumeStream resumes a streamed call whose stream was cut, from the
// pieces after the after-th (the id of the last delta event read; 0 for
// all): the rest of its pieces as the replica that runs it holds them,
// then its record once it ends (docs/streaming.md, GET
// /v1/executions/{id}/stream).
func (c *Client) ResumeStream(ctx context.Context, id string, after int, delta func(text string)) (api.ExecutionRecord, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/executions/"+url.PathEscape(id)+"/stream", nil)
	if err != nil {
		return api.ExecutionRecord{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.Itoa(after))
	}
	return c.stream(req, after, delta, nil)
}

// stream sends req and reads its answer: a stream's pieces given to delta
// and its last event's record, or an answer that is not a stream. after
// is the id of the last delta read before this request; head, when not
// nil, is shown the answer before its body is read.
func (c *Client) stream(req *http.Request, after int, delta func(text string), head func(*http.Response)) (api.ExecutionRecord, error) {
	var out api.ExecutionRecord
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if head != nil {
		head(resp)
	}
	if t, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); t != "text/event-stream" {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxStream))
		switch {
		case err != nil:
			return out, err
		case resp.StatusCode >= 300:
			return out, apiError(resp, data)
		}
		return out, json.Unmarshal(data, &out)
	}
	r := sse.NewReader(resp.Body, maxStream)
	cut := &StreamCut{ExecutionID: resp.Header.Get("X-Crtx-Execution-Id"), LastEventID: after}
	for {
		ev, err := r.Next()
		if err != nil {
			cut.Err = err
			return out, cut
		}
		if ev.Name == crtx.EventDelta {
			cut.LastEventID, _ = strconv.Atoi(ev.ID)
			var d crtx.Delta
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return out, fmt.Errorf("crtx: a delta event: %w", err)
			}
			delta(d.Text)
			continue
		}
		if ev.Name == "error" {
			// The stream ended without the call's record (it did not end
			// on that replica): the error body says how to follow it.
			var eb api.ErrorBody
			if err := json.Unmarshal(ev.Data, &eb); err != nil || eb.Error.Code == "" {
				return out, fmt.Errorf("crtx: the stream's error event: %q", ev.Data)
			}
			return out, &Error{Status: api.Status(&crtx.Error{Code: eb.Error.Code}), Code: eb.Error.Code, Message: eb.Error.Message,
				ExecutionID: eb.Error.ExecutionID, RequestID: resp.Header.Get("X-Request-Id")}
		}
		// The last event, named by the final status, is the record.
		if err := json.Unmarshal(ev.Data, &out); err != nil {
			return out, fmt.Errorf("crtx: the stream's record: %w", err)
		}
		if out.Error != nil {
			return out, &Error{Status: api.Status(&crtx.Error{Code: out.Error.Code, ExecutionID: out.ExecutionID}), Code: out.Error.Code, Message: out.Error.Message,
				ExecutionID: &out.ExecutionID, RequestID: resp.Header.Get("X-Request-Id")}
		}
		return out, nil
	}
}

// StreamCut is a stream that ended before its call did (the connection
// was lost): the call goes on, and ResumeStream(ExecutionID, LastEventID)
// reads the rest.
type StreamCut struct {
	ExecutionID string
	// LastEventID is the id of the last delta read: the pieces read.
	LastEventID int
	Err         error
}

func (e *StreamCut) Error() string {
	return fmt.Sprintf("crtx: the stream of execution %s ended after %d pieces, before its call did: %v", e.ExecutionID, e.LastEventID, e.Err)
}

func (e *StreamCut) Unwrap() error { return e.Err }
