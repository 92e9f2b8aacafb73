package http

import (
	"context"
	"net/http"

	"github.com/crtx-market/crtx"
)

func pathEnv(r *http.Request) (crtx.Environment, error) {
	return crtx.ParseEnvironment("environment", r.PathValue("environment"))
}

// ledgerRead serves a ledger read named by the environment in the path and
// one more path value (an account's address, a transaction's id).
func ledgerRead[T any](key string, read func(context.Context, crtx.Environment, string) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		env, err := pathEnv(r)
		if err != nil {
			return err
		}
		v, err := read(r.Context(), env, r.PathValue(key))
		return reply(w, http.StatusOK, v, err)
	}
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
	v, err := s.market.Ledger.Block(r.Context(), env, h)
	return reply(w, http.StatusOK, v, err)
}
