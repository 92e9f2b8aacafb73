package gate

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// WriteError is the one place an error becomes the seed's error body.
// Anything that is not a *crtx.Error is logged with the request id and
// answered 500 without its text.
func (g *Gate) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := g.Refusal(w, r, err)
	WriteJSON(w, status, body)
}

// Refuse answers err as WriteError does, for a protocol (MCP, A2A) refusing
// what comes before its own framing: a 401 carries the Bearer challenge
// HTTP clients look for.
func (g *Gate) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	var e *crtx.Error
	if errors.As(err, &e) && api.Status(e) == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crtx"`)
	}
	g.WriteError(w, r, err)
}

// Refusal is the status and the seed's error body WriteError answers err
// with, its Retry-After already set on w: for a writer that adds to the
// body (Solana Pay's top-level message).
func (g *Gate) Refusal(w http.ResponseWriter, r *http.Request, err error) (int, api.ErrorBody) {
	var pe *crtx.PaymentError
	if errors.As(err, &pe) {
		err = pe.Err()
	}
	var e *crtx.Error
	if !errors.As(err, &e) {
		id := RequestID(r)
		g.log.ErrorContext(r.Context(), "internal error", "request_id", id, "err", err)
		e = &crtx.Error{Code: crtx.CodeInternal, Message: "internal error; quote request id " + id + " when reporting it"}
	} else if err != error(e) {
		// A caller's error that wraps its cause (a chain that did not
		// answer): the caller reads the words, the log the cause, which may
		// name what the caller must not see, such as an RPC provider's key.
		g.log.WarnContext(r.Context(), e.Message, "request_id", RequestID(r), "err", err)
	}
	body := api.ErrorBody{Error: api.ErrorDetail{Code: e.Code, Message: e.Message}}
	if fields := crtx.FieldErrors(err); len(fields) > 1 {
		// Every field at fault at once, not one a request.
		msgs := make([]string, len(fields))
		for i, f := range fields {
			body.Error.Fields = append(body.Error.Fields, api.FieldError{Field: f.Field, Message: strings.TrimPrefix(f.Message, f.Field+": ")})
			msgs[i] = f.Message
		}
		body.Error.Message = strings.Join(msgs, "; ")
	}
	if e.ExecutionID != "" {
		body.Error.ExecutionID = &e.ExecutionID
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	return api.Status(e), body
}

// JSONBytes is v as a response body: JSON and a newline.
func JSONBytes(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}

// WriteJSON answers v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := JSONBytes(v)
	if err != nil {
		// Only a programming error gets here: every response type marshals.
		slog.Error("marshal response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"internal error","execution_id":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
