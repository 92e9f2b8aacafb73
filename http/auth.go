package http

import (
	"net/http"

	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
)

type challengeRequest struct {
	Wallet string `json:"wallet"`
}

func (s *Server) challenge(w http.ResponseWriter, r *http.Request) error {
	var req challengeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	msg, err := s.market.Accounts.Challenge(r.Context(), req.Wallet)
	return reply(w, http.StatusOK, api.ChallengeResponse{Message: msg.String(), ExpiresAt: msg.ExpirationTime}, err)
}

type sessionRequest struct {
	Wallet    string `json:"wallet"`
	Message   string `json:"message"`
	Signature string `json:"signature"`
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req sessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Message == "" || req.Signature == "" {
		return invalid("wallet, message and signature are required")
	}
	token, sess, err := s.market.Accounts.SignIn(r.Context(), req.Wallet, req.Message, req.Signature)
	return reply(w, http.StatusCreated, api.SessionResponse{SessionToken: token, Wallet: sess.Wallet, ExpiresAt: sess.ExpiresAt}, err)
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.gate.Session(r); err != nil {
		return err
	}
	if err := s.market.Accounts.SignOut(r.Context(), gate.Bearer(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
