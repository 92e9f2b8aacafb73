package http

import (
	"encoding/base64"
	"fmt"
	"net/http"

	"github.com/crtx-market/crtx/api"
)

// A deposit's Solana Pay transaction request (the spec's "link"): a wallet
// GETs the label and icon to show, then POSTs its account and signs and
// sends the transaction it gets back. Wallets fetch it from wherever they
// run, phone apps and browser extensions alike, with no credentials: it
// answers any origin, and it only ever builds a payment into the treasury
// credited to the deposit's own wallet.

// anyOrigin answers h to any origin, its errors too (a rate limit, a
// closed deposit), which a browser would otherwise hide from the wallet,
// and has its errors say their message where the Solana Pay specification
// has wallets read it.
func anyOrigin(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Content-Type, Accept")
		if err := h(w, r); err != nil {
			return solanaPayError{err}
		}
		return nil
	}
}

// solanaPayError is an error of a Solana Pay request: its body also has
// the top-level "message" wallets show.
type solanaPayError struct{ error }

func (e solanaPayError) Unwrap() error { return e.error }

func (s *Server) solanaPayPreflight(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) solanaPayLabel(w http.ResponseWriter, r *http.Request) error {
	_, err := s.market.Funds.OpenDeposit(r.Context(), r.PathValue("deposit_id"))
	return reply(w, http.StatusOK, api.SolanaPayLabel{Label: "crtx", Icon: s.market.Config().PublicURL + "/static/favicon.svg"}, err)
}

func (s *Server) solanaPayTransaction(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Account string `json:"account"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	raw, amount, err := s.market.Funds.PayDeposit(r.Context(), r.PathValue("deposit_id"), req.Account)
	return reply(w, http.StatusOK, api.SolanaPayTransaction{Transaction: base64.StdEncoding.EncodeToString(raw),
		Message: fmt.Sprintf("Add %s USDC to your crtx wallet", amount)}, err)
}
