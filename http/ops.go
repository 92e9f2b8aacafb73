package http

import (
	_ "embed"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.market.Ping(r.Context()); err != nil {
		s.log.Warn("not ready", "request_id", requestID(r), "err", err)
		return crtx.Errorf(crtx.CodeUnavailable, "the database does not answer")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) wellKnown(w http.ResponseWriter, r *http.Request) error {
	cfg := s.market.Config()
	writeJSON(w, http.StatusOK, api.WellKnown{
		SigningPublicKey:   crtx.Address(s.market.SigningPublicKey()),
		AuthorityPublicKey: crtx.Address(s.market.AuthorityPublicKey()),
		PublicURL:          cfg.PublicURL, PlatformFeeBps: cfg.FeeBps, Environments: crtx.Environments,
	})
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDoc)
	return nil
}
