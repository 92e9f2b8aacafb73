package a2a

import (
	"context"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

// call is who is calling which agent's endpoint, as the HTTP layer found
// out before the SDK read the body.
type call struct {
	principal crtx.Principal
	agentID   string
	requestID string // the daemon's X-Request-Id, quoted in internal errors
	version   string // the A2A-Version the client asked for, if any
}

type callKey struct{}

// authenticated lets a request reach the A2A transport only with a valid
// API key within its rate limit. A refusal is the REST interface's error
// body with a plain HTTP status: before the key is known there is no A2A
// conversation to answer in, and 401 with a challenge is what any HTTP
// client understands.
func (s *server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.gate.Caller(r)
		if err != nil {
			s.gate.Refuse(w, r, err)
			return
		}
		// The version is a header, or a query parameter of the same name
		// (A2A 1.0, "Version headers"), which a client that cannot set
		// headers sends.
		version := r.Header.Get(a2a.SvcParamVersion)
		if version == "" {
			version = r.URL.Query().Get(a2a.SvcParamVersion)
		}
		c := call{principal: p, agentID: r.PathValue("agent_id"), requestID: w.Header().Get("X-Request-Id"), version: version}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
	})
}

// callFrom returns the call a request handler serves, refusing a protocol
// version this endpoint does not speak. A client that names no version
// speaks 0.3 (A2A 1.0, "Version headers": a request without A2A-Version is
// to be read as 0.3), which is refused as any other but 1.0.
func callFrom(ctx context.Context) (call, error) {
	c, ok := ctx.Value(callKey{}).(call)
	if !ok || c.principal.Key == nil {
		// Only a route mounted without authenticated gets here.
		return call{}, a2a.NewError(a2a.ErrUnauthenticated, "send Authorization: Bearer crtx_live_… or crtx_test_…")
	}
	v := strings.TrimSpace(c.version)
	if v == "" {
		v = "0.3"
	}
	if v != string(a2a.Version) { // Major.Minor must match
		return call{}, a2a.NewError(a2a.ErrVersionNotSupported,
			"A2A-Version "+v+" is not supported: this agent speaks A2A "+string(a2a.Version)+"; send the header A2A-Version: "+string(a2a.Version)).
			WithDetails(map[string]any{"supported_versions": []any{string(a2a.Version)}})
	}
	return c, nil
}
