package http

import "net/http"

// Protocol serves another protocol's endpoint (MCP, A2A) beside the REST
// interface, behind the same middleware: request id, body limit, panic
// guard, metrics and log. h answers its own errors, in its protocol's form.
func (s *Server) Protocol(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }
