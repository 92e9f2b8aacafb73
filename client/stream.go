package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

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
// stream cut before its end says so: the record can then be read by id
// (Execution), once the call ends.
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
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
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
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("crtx: the stream ended before the call did: %w", io.ErrUnexpectedEOF)
			}
			return out, err
		}
		if ev.Name == crtx.EventDelta {
			var d crtx.Delta
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return out, fmt.Errorf("crtx: a delta event: %w", err)
			}
			delta(d.Text)
			continue
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
