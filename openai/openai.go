// Package openai serves agents the way language models are served: an
// OpenAI-compatible endpoint, so that any client of OpenAI's API (the
// official SDKs, chat UIs, editors) runs an agent with {base_url}/v1 as its
// base URL, a crtx API key as its key and an agent id as its model
// (docs/openai.md). It is an adapter over the market's one execution path:
// the same key, limits, escrow and settlement as POST
// /v1/agents/{agent_id}/execute.
package openai

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
)

// Options configure the endpoint.
type Options struct {
	Gate   *gate.Gate
	Logger *slog.Logger
}

// Server answers GET /v1/models, GET /v1/models/{model} and POST
// /v1/chat/completions.
type Server struct {
	market *market.Market
	gate   *gate.Gate
	log    *slog.Logger
	mux    *http.ServeMux
}

// Routes are the patterns the endpoint answers, for the daemon to mount.
func Routes() []string {
	return []string{"GET /v1/models", "GET /v1/models/{model}", "POST /v1/chat/completions"}
}

// New returns the endpoint over m.
func New(m *market.Market, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{market: m, gate: opts.Gate, log: opts.Logger, mux: http.NewServeMux()}
	routes := Routes()
	s.mux.HandleFunc(routes[0], s.handle(s.models))
	s.mux.HandleFunc(routes[1], s.handle(s.model))
	s.mux.HandleFunc(routes[2], s.handle(s.chat))
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// handle answers h's error in OpenAI's shape.
func (s *Server) handle(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			status, body := s.refusal(w, r, err)
			gate.WriteJSON(w, status, body)
		}
	}
}

// refusal is err as OpenAI's error body, with the status crtx answers it
// with: its code is crtx's, its type OpenAI's nearest.
func (s *Server) refusal(w http.ResponseWriter, r *http.Request, err error) (int, errorBody) {
	var e *crtx.Error
	if errors.As(err, &e) && api.Status(e) == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crtx"`)
	}
	status, b := s.gate.Refusal(w, r, err)
	// Only a busy marketplace is worth a client's automatic retry: any
	// other answer would be the same, or a new call, charged again.
	retry := "false"
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		retry = "true"
	}
	w.Header().Set("X-Should-Retry", retry)
	return status, errorBody{Error: errorDetail{Message: b.Error.Message, Type: errorType(status), Code: b.Error.Code, ExecutionID: b.Error.ExecutionID}}
}

// errorType is the type OpenAI gives errors of status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == http.StatusPaymentRequired:
		return "insufficient_quota"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}
