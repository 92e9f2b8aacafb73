package http

import (
	"context"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
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

func (s *Server) account(ctx context.Context, env crtx.Environment, address string) (api.AccountView, error) {
	h, err := s.market.Ledger.Account(ctx, env, address)
	return api.NewAccountView(h), err
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
	b, err := s.market.Ledger.Block(r.Context(), env, h)
	return reply(w, http.StatusOK, api.NewBlockView(b), err)
}
