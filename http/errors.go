package http

import (
	"errors"
	"net/http"

	"github.com/crtx-market/crtx/gate"
)

// writeError is the one place a REST handler's error becomes a response:
// OAuth's own body for the OAuth endpoints, else the gate's error body,
// with the message also at the top level for a Solana Pay wallet.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if writeOAuthError(w, err) {
		return
	}
	var sp solanaPayError
	if !errors.As(err, &sp) {
		s.gate.WriteError(w, r, err)
		return
	}
	status, body := s.gate.Refusal(w, r, sp.error)
	body.Message = body.Error.Message
	writeJSON(w, status, body)
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

var (
	writeJSON = gate.WriteJSON
	jsonBytes = gate.JSONBytes
)
