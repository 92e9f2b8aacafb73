package http

import (
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

type chainRequest struct {
	Environment crtx.Environment `json:"environment"`
	Amount      *crtx.USDC       `json:"amount_usdc"`
}

// decodeChainRequest reads {"environment", "amount_usdc"}; an API key acts
// in its own environment only.
func decodeChainRequest(r *http.Request, p crtx.Principal) (chainRequest, error) {
	var req chainRequest
	if err := decode(r, &req); err != nil {
		return req, err
	}
	if req.Amount == nil {
		return req, crtx.InvalidField("amount_usdc", "is required")
	}
	if req.Environment == "" && p.Key != nil {
		req.Environment = p.Key.Environment
	}
	if _, err := crtx.ParseEnvironment("environment", string(req.Environment)); err != nil {
		return req, err
	}
	if p.Key != nil && req.Environment != p.Key.Environment {
		return req, crtx.Errorf(crtx.CodeInvalidRequest, "this API key belongs to %s; it cannot deposit on %s", p.Key.Environment, req.Environment)
	}
	return req, nil
}

// listEnvironment is the environment a wallet list reads: the key's own,
// or ?environment= (mainnet when absent) with a session.
func listEnvironment(q query, p crtx.Principal) (crtx.Environment, error) {
	env, err := q.env()
	if err != nil || p.Key == nil {
		return env, err
	}
	if q.has("environment") && env != p.Key.Environment {
		return env, crtx.Errorf(crtx.CodeInvalidRequest, "this API key belongs to %s", p.Key.Environment)
	}
	return p.Key.Environment, nil
}

func (s *Server) createDeposit(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	req, err := decodeChainRequest(r, p)
	if err != nil {
		return err
	}
	d, err := s.market.Funds.CreateDeposit(r.Context(), p.Wallet, req.Environment, *req.Amount)
	return reply(w, http.StatusCreated, api.NewDeposit(d, nil, s.market.Links()), err)
}

func (s *Server) getDeposit(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	d, ps, err := s.market.Funds.Deposit(r.Context(), p.Wallet, r.PathValue("deposit_id"))
	if err == nil && p.Key != nil && d.Environment != p.Key.Environment {
		err = crtx.Errorf(crtx.CodeDepositNotFound, "no deposit %q for this wallet", r.PathValue("deposit_id"))
	}
	return reply(w, http.StatusOK, api.NewDeposit(d, ps, s.market.Links()), err)
}

func (s *Server) listDeposits(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	_, limit, offset, env, err := walletListQuery(r, p)
	if err != nil {
		return err
	}
	ds, total, err := s.market.Funds.Deposits(r.Context(), p.Wallet, env, limit, offset)
	page := api.DepositPage{Deposits: []api.Deposit{}, Page: api.Page{Total: total, Limit: limit, Offset: offset}}
	for _, d := range ds {
		page.Deposits = append(page.Deposits, api.NewDeposit(d, nil, s.market.Links()))
	}
	return reply(w, http.StatusOK, page, err)
}

// walletListQuery reads limit, offset and environment.
func walletListQuery(r *http.Request, p crtx.Principal) (q query, limit, offset int, env crtx.Environment, err error) {
	if q, err = newQuery(r, "limit", "offset", "environment"); err != nil {
		return
	}
	if limit, err = q.int("limit", 20, 1, 100); err != nil {
		return
	}
	if offset, err = q.int("offset", 0, 0, 1<<30); err != nil {
		return
	}
	env, err = listEnvironment(q, p)
	return
}

// createWithdrawal takes a session only: an API key, which a program holds,
// never moves money out of the marketplace.
func (s *Server) createWithdrawal(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	req, err := decodeChainRequest(r, p)
	if err != nil {
		return err
	}
	wd, err := s.market.Funds.Withdraw(r.Context(), p.Wallet, req.Environment, *req.Amount)
	return reply(w, http.StatusAccepted, api.NewWithdrawal(wd, s.market.Links()), err)
}

func (s *Server) getWithdrawal(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	wd, err := s.market.Funds.Withdrawal(r.Context(), p.Wallet, r.PathValue("withdrawal_id"))
	if err == nil && p.Key != nil && wd.Environment != p.Key.Environment {
		err = crtx.Errorf(crtx.CodeWithdrawalNotFound, "no withdrawal %q for this wallet", r.PathValue("withdrawal_id"))
	}
	return reply(w, http.StatusOK, api.NewWithdrawal(wd, s.market.Links()), err)
}

func (s *Server) listWithdrawals(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	_, limit, offset, env, err := walletListQuery(r, p)
	if err != nil {
		return err
	}
	ws, total, err := s.market.Funds.Withdrawals(r.Context(), p.Wallet, env, limit, offset)
	page := api.WithdrawalPage{Withdrawals: []api.Withdrawal{}, Page: api.Page{Total: total, Limit: limit, Offset: offset}}
	for _, wd := range ws {
		page.Withdrawals = append(page.Withdrawals, api.NewWithdrawal(wd, s.market.Links()))
	}
	return reply(w, http.StatusOK, page, err)
}

func (s *Server) reserves(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.market.Ledger.Reserves(r.Context())
	return reply(w, http.StatusOK, api.Reserves{Reserves: rs}, err)
}

func (s *Server) unattributed(w http.ResponseWriter, r *http.Request) error {
	q, err := newQuery(r, "environment", "limit")
	if err != nil {
		return err
	}
	env, err := q.env()
	if err != nil {
		return err
	}
	limit, err := q.int("limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	ps, err := s.market.Funds.Unattributed(r.Context(), env, limit)
	out := api.Unattributed{Transfers: []api.ChainTransfer{}}
	for _, p := range ps {
		out.Transfers = append(out.Transfers, api.ChainTransfer{Signature: p.Signature, Part: p.Part, Slot: p.Slot, Amount: p.Amount, From: p.From, Finalized: p.Finalized})
	}
	return reply(w, http.StatusOK, out, err)
}
