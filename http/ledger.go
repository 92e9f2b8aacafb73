package http

import (
	"net/http"
	"strconv"

	"github.com/crtx-market/crtx"
)

func pathEnv(r *http.Request) (crtx.Environment, error) {
	return crtx.ParseEnvironment("environment", r.PathValue("environment"))
}

func height(s string) (int64, error) {
	h, err := strconv.ParseInt(s, 10, 64)
	if err != nil || h < 1 {
		return 0, invalid("height must be a block height, a whole number from 1")
	}
	return h, nil
}

func (s *Server) ledgerAccount(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	v, err := s.market.Account(r.Context(), env, r.PathValue("address"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) ledgerTransaction(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	t, err := s.market.Transaction(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) ledgerProof(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	p, err := s.market.Proof(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) ledgerBlock(w http.ResponseWriter, r *http.Request) error {
	env, err := pathEnv(r)
	if err != nil {
		return err
	}
	h, err := height(r.PathValue("height"))
	if err != nil {
		return err
	}
	v, err := s.market.Block(r.Context(), env, h)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
