package http

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

// writeError is the one place an error becomes a response. Anything that is
// not a *crtx.Error is logged with the request id and answered 500 without
// its text.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if writeOAuthError(w, err) {
		return
	}
	var sp solanaPayError
	solanaPay := errors.As(err, &sp)
	if solanaPay {
		err = sp.error
	}
	var pe *crtx.PaymentError
	if errors.As(err, &pe) {
		err = pe.Err()
	}
	var e *crtx.Error
	if !errors.As(err, &e) {
		id := requestID(r)
		s.log.ErrorContext(r.Context(), "internal error", "request_id", id, "err", err)
		e = &crtx.Error{Code: crtx.CodeInternal, Message: "internal error; quote request id " + id + " when reporting it"}
	} else if err != error(e) {
		// A caller's error that wraps its cause (a chain that did not
		// answer): the caller reads the words, the log the cause, which may
		// name what the caller must not see, such as an RPC provider's key.
		s.log.WarnContext(r.Context(), e.Message, "request_id", requestID(r), "err", err)
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
	if solanaPay {
		body.Message = body.Error.Message
	}

	if e.ExecutionID != "" {
		body.Error.ExecutionID = &e.ExecutionID
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	writeJSON(w, api.Status(e), body)
}

func jsonBytes(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}

// reply writes v with status, unless the call that made it failed: the
// tail of a handler that answers what one market call returned.
func reply(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonBytes(v)
	if err != nil {
		// Only a programming error gets here: every response type marshals.
		slog.Error("marshal response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"internal error","execution_id":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
