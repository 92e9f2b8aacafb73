package gate

import (
	"context"
	"net/http"
)

type requestIDKey struct{}

// WithRequestID is r carrying id, the X-Request-Id its answer has, for
// the logs of what it fails with.
func WithRequestID(r *http.Request, id string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
}

// RequestID is the id WithRequestID gave r, or "".
func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}
