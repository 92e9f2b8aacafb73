package http

import (
	"net/http"

	"github.com/crtx-market/crtx/api"
)

func (s *Server) createKey(w http.ResponseWriter, r *http.Request) error {
	p, req, err := withBody[api.CreateKeyRequest](r, s.gate.Session)
	if err != nil {
		return err
	}
	k, secret, err := s.market.Accounts.CreateKey(r.Context(), p.Wallet, req.Name, req.Environment, req.SpendLimit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, api.CreatedKey{ID: k.ID, Name: k.Name, Environment: k.Environment, Key: secret,
		Prefix: k.Prefix, CreatedAt: k.CreatedAt, SpendLimit: k.SpendLimit})
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	keys, err := s.market.Accounts.Keys(r.Context(), p.Wallet)
	return reply(w, http.StatusOK, api.KeyList{Keys: keys}, err)
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	k, err := s.market.Accounts.RevokeKey(r.Context(), p.Wallet, r.PathValue("key_id"))
	return reply(w, http.StatusOK, k, err)
}
