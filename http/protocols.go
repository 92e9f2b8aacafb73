package http

import (
	"errors"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/oauth"
)

// Protocol serves another protocol's endpoint (MCP, A2A) beside the REST
// interface, behind the same middleware: request id, body limit, panic
// guard, metrics and log. h answers its own errors, in its protocol's form.
func (s *Server) Protocol(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Caller authenticates a protocol request as the REST interface does an
// execute: an API key (never a session), within the key's rate limit.
func (s *Server) Caller(r *http.Request) (crtx.Principal, error) {
	if r.Header.Get("Authorization") == "" {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeAuthenticationRequired, "send Authorization: Bearer crtx_live_… or crtx_test_… (an API key)")
	}
	return s.apiKey(r)
}

// Challenge is the WWW-Authenticate of a 401 from the MCP endpoint: where
// its OAuth metadata is (RFC 9728 §5.1), and invalid_token when a token
// was sent and refused (RFC 6750 §3.1), so a connector refreshes it.
func (s *Server) Challenge(r *http.Request) string {
	c := `Bearer resource_metadata="` + s.ResourceMetadataURL() + `", scope="` + oauth.Scope + `"`
	if bearer(r) != "" {
		c += `, error="invalid_token"`
	}
	return c
}

// Bearer is the token of a request's Authorization: Bearer header, as
// Caller read it.
func Bearer(r *http.Request) string { return bearer(r) }

// WriteError answers err with the seed's error body, as a REST error is
// answered; a protocol uses it for what happens before its own framing.
// A 401 carries the Bearer challenge HTTP clients look for.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var e *crtx.Error
	if errors.As(err, &e) && api.Status(e) == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crtx"`)
	}
	s.writeError(w, r, err)
}

// AdmitStream takes one of the key's stream slots, or refuses as
// GET /v1/executions/{execution_id}/events does when all are taken; release gives
// the slot back.
func (s *Server) AdmitStream(keyID string) (release func(), err error) {
	return s.streams.admit(keyID, "this API key has %d streams open, its limit; close one first")
}

// Limit counts one more request of p's key against the key's rate limit,
// for a protocol whose one HTTP request carries several calls (an MCP
// batch): each is counted, as that many REST requests would be.
func (s *Server) Limit(p crtx.Principal) error { return s.limitKey(p) }

// AllowPayer bounds the x402 payments a protocol checks as the execute
// endpoint bounds its own (each costs an RPC call): per payer address, and
// for the whole marketplace. It is market.Paid's Allow.
func (s *Server) AllowPayer(payer string) error { return s.allowPayer(payer) }

// AllowReplay bounds the answers to x402 payments sent again, per payer
// address, on a budget apart from its payments', for a protocol that
// knows no client address (MCP, whose proven payers, by their idempotency
// key, never reach it). It is market.Paid's AllowReplay.
func (s *Server) AllowReplay(payer string) error { return s.allowReplay("payer:" + payer) }
