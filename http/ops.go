package http

import (
	_ "embed"
	"fmt"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
)

//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.market.Ping(r.Context()); err != nil {
		s.log.Warn("not ready", "request_id", gate.RequestID(r), "err", err)
		return crtx.Errorf(crtx.CodeUnavailable, "the database does not answer")
	}
	out := map[string]any{"status": "ok"}
	for _, env := range crtx.Environments {
		c := s.market.Chain(env)
		if c == nil {
			continue
		}
		lamports, err := c.FeeBalance(r.Context())
		if err != nil {
			s.log.Warn("not ready", "request_id", gate.RequestID(r), "environment", env, "err", err)
			return crtx.Errorf(crtx.CodeUnavailable, "the %s chain does not answer", env)
		}
		// Reported, not refused: a replica low on fees still serves every
		// call; only withdrawals and anchors wait for SOL.
		out[string(env)+"_fee_lamports"] = lamports
		if lamports < lowFeeLamports {
			out["status"] = "degraded"
			out[string(env)+"_warning"] = fmt.Sprintf("the treasury %s holds %d lamports for fees, under %d: send it SOL", c.Treasury(), lamports, lowFeeLamports)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// lowFeeLamports is the treasury's SOL below which /readyz warns: 0.05 SOL,
// some ten thousand transfers' fees or twenty token accounts' rent.
const lowFeeLamports = 50_000_000

func (s *Server) wellKnown(w http.ResponseWriter, r *http.Request) error {
	c := s.market.Config()
	writeJSON(w, http.StatusOK, api.NewWellKnown(s.market.SigningPublicKey(), s.market.Config().NextSigner, s.market.Config().PreviousSigner, s.market.AuthorityPublicKey(), c.PublicURL, c.FeeBps))
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDoc)
	return nil
}
