package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/sse"
)

// streamed reports a reply sent as Server-Sent Events.
func streamed(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "text/event-stream"
}

// A stream is bounded by its text, not its framing (which a model's
// token-sized pieces make many times the text): its pieces joined are at
// most a result (crtx.MaxResultBytes), its events at most maxEvents, and
// all of it at most maxStream bytes, a bound against a stream of nothing
// but framing.
const (
	maxEvents = 1 << 20
	maxStream = 128 << 20
)

// stream reads a creator's streamed reply: each delta given to deltas as
// it comes, then the result event, whose result must be the deltas
// joined. What follows the result event is not read.
func (c *Caller) stream(ctx context.Context, body io.Reader, deltas func(string)) (crtx.CreatorReply, error) {
	var reply crtx.CreatorReply
	invalid := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		return &crtx.CallError{Code: crtx.CodeInvalidAgentResponse, Message: msg, Err: errors.New(msg)}
	}
	r := sse.NewReader(body, maxStream)
	var joined strings.Builder
	for events := 0; ; events++ {
		if events > maxEvents {
			return reply, invalid("the stream has more than %d events", maxEvents)
		}
		ev, err := r.Next()
		switch {
		case err != nil && ctx.Err() != nil:
			return reply, &crtx.CallError{Code: crtx.CodeExecutionTimeout, Message: "the stream did not finish before the deadline",
				Err: fmt.Errorf("the stream did not finish before the deadline: %w", err)}
		case errors.Is(err, sse.ErrTooLarge):
			return reply, invalid("the stream is larger than %d bytes", maxStream)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return reply, invalid("the stream ended without its result event")
		case err != nil:
			return reply, &crtx.CallError{Code: crtx.CodeInvalidAgentResponse, Message: "the stream could not be read", Err: fmt.Errorf("reading the stream: %w", err)}
		}
		switch ev.Name {
		case crtx.EventDelta:
			var d crtx.Delta
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return reply, invalid("a delta event's data is not {\"text\": …}")
			}
			if joined.Len()+len(d.Text) > crtx.MaxResultBytes {
				return reply, invalid("the streamed result is larger than %d bytes", crtx.MaxResultBytes)
			}
			joined.WriteString(d.Text)
			if deltas != nil && d.Text != "" {
				deltas(d.Text)
			}
		case crtx.EventResult:
			if err := json.Unmarshal(ev.Data, &reply); err != nil {
				return reply, invalid("the result event's data is not a JSON object of the creator protocol")
			}
			if reply.Status == "completed" && (reply.Result == nil || *reply.Result != joined.String()) {
				return reply, invalid("the streamed result is not its deltas joined")
			}
			return reply, nil
		}
		// Other events are a later version's: ignored.
	}
}
