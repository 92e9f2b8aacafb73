package http

import (
	"context"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// webhookSecret answers the wallet's webhook signing secret, made on first
// read, for receivers that verify the Standard Webhooks "v1" signature.
func (s *Server) webhookSecret(w http.ResponseWriter, r *http.Request) error {
	return s.answerWebhookSecret(w, r, s.market.Connectors.WebhookSecret)
}

// rotateWebhookSecret replaces it; the old one signs on for 24 hours.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	return s.answerWebhookSecret(w, r, s.market.Connectors.RotateWebhookSecret)
}

// answerWebhookSecret acts on the secret of an API key's environment, or,
// with a session, of ?environment= (mainnet by default, as the wallet's
// lists).
func (s *Server) answerWebhookSecret(w http.ResponseWriter, r *http.Request, get func(ctx context.Context, wallet string, env crtx.Environment) (crtx.WebhookSecret, error)) error {
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	if p.Connector() != "" {
		// It signs the wallet's deliveries: no third party's to hold.
		return crtx.Errorf(crtx.CodeInvalidSession, "an MCP connector's key cannot read or rotate the webhook secret; use a session or a key made on the keys page")
	}
	q, err := newQuery(r, "environment")
	if err != nil {
		return err
	}
	env, err := listEnvironment(q, p)
	if err != nil {
		return err
	}
	secret, err := get(r.Context(), p.Wallet, env)
	return reply(w, http.StatusOK, api.WebhookSecretResponse{Key: secret.String()}, err)
}
