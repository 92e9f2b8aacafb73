package http

import (
	"net/http"

	"github.com/crtx-market/crtx"
)

func pathEnv(r *http.Request) (crtx.Environment, error) {
	return crtx.ParseEnvironment("environment", r.PathValue("environment"))
}

func (s *Server) ledgerAccount(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	v, err := s.market.Account(r.Context(), env, r.PathValue("address"))
	return reply(w, http.StatusOK, v, err)
}

func (s *Server) ledgerTransaction(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	t, err := s.market.Transaction(r.Context(), env, r.PathValue("id"))
	return reply(w, http.StatusOK, t, err)
}

func (s *Server) ledgerProof(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	p, err := s.market.Proof(r.Context(), env, r.PathValue("id"))
	return reply(w, http.StatusOK, p, err)
}

func (s *Server) ledgerBlock(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	h, err := crtx.ParseHeight(r.PathValue("height"))
	if err != nil {
		return err
	}
	v, err := s.market.Block(r.Context(), env, h)
	return reply(w, http.StatusOK, v, err)
}
