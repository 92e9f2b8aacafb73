package http

import (
	"context"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/siwx"
)

func (s *Server) wallet(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Principal(r)
	if r.Header.Get("Authorization") == "" && r.Header.Get(siwx.Header) != "" {
		// An x402 payer reads its balance, where a metered call's unused
		// payment returned, with the proof it reads its calls with: that
		// proof's environment alone. Withdrawing it takes a session.
		p, err = s.market.Accounts.SignedInWithX(r.Context(), r.Header.Get(siwx.Header))
	}
	if err != nil {
		return err
	}
	envs := crtx.Environments
	if p.Key != nil || p.Signed != "" {
		envs = []crtx.Environment{p.Environment()}
	}
	b, err := s.market.Funds.Balances(r.Context(), p.Wallet, envs...)
	return reply(w, http.StatusOK, api.WalletResponse{Wallet: p.Wallet, Balances: b}, err)
}

type fundingRequest struct {
	Environment crtx.Environment `json:"environment"`
	Wallet      string           `json:"wallet"`
	Amount      *crtx.USDC       `json:"amount_usdc"`
}

func (s *Server) fundingResponse(w http.ResponseWriter, status int, req fundingRequest, f crtx.Funding) {
	t := f.Transaction
	r := api.FundingResponse{TransactionID: t.ID, Kind: t.Kind, Environment: t.Environment, Wallet: req.Wallet, Amount: *req.Amount,
		Balance: f.Balance}
	if f.Faucet != nil {
		r.TransactionID, r.Kind, r.Environment = f.Faucet.Signature, api.KindFaucet, crtx.Devnet
		r.TokenAccount, r.SOLLamports = f.Faucet.TokenAccount, f.Faucet.Lamports
	}
	r.ExplorerURL = s.market.Links().Account(r.Environment, crtx.AccountAddress(crtx.AccountWallet, req.Wallet))
	writeJSON(w, status, r)
}

func (s *Server) decodeFunding(r *http.Request, withEnv bool) (fundingRequest, error) {
	var req fundingRequest
	if err := decode(r, &req); err != nil {
		return req, err
	}
	if !withEnv && req.Environment != "" {
		return req, invalid("unknown parameter: environment (airdrops are devnet only)")
	}
	if req.Amount == nil {
		return req, invalid("amount_usdc is required")
	}
	return req, nil
}

func (s *Server) airdrop(w http.ResponseWriter, r *http.Request) error {
	req, err := s.decodeFunding(r, false)
	if err != nil {
		return err
	}
	f, err := s.market.Funds.Airdrop(r.Context(), req.Wallet, *req.Amount)
	if err != nil {
		return err
	}
	s.fundingResponse(w, http.StatusOK, req, f)
	return nil
}

func (s *Server) adminDeposit(w http.ResponseWriter, r *http.Request) error {
	return s.adminFunding(w, r, s.market.Funds.OperatorDeposit)
}

func (s *Server) adminWithdraw(w http.ResponseWriter, r *http.Request) error {
	return s.adminFunding(w, r, s.market.Funds.OperatorWithdraw)
}

func (s *Server) adminFunding(w http.ResponseWriter, r *http.Request,
	move func(context.Context, crtx.Environment, string, crtx.USDC) (crtx.Funding, error)) error {
	req, err := s.decodeFunding(r, true)
	if err != nil {
		return err
	}
	if req.Environment == "" {
		return invalid("environment is required")
	}
	f, err := move(r.Context(), req.Environment, req.Wallet, *req.Amount)
	if err != nil {
		return err
	}
	s.fundingResponse(w, http.StatusCreated, req, f)
	return nil
}
