package http

import (
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

func disputeList(ds []crtx.Dispute) api.DisputeList {
	out := api.DisputeList{Disputes: make([]api.DisputeInfo, len(ds))}
	for i, d := range ds {
		out.Disputes[i] = api.NewDisputeInfo(d)
	}
	return out
}

func (s *Server) openDispute(w http.ResponseWriter, r *http.Request) error {
	p, in, err := withBody[crtx.DisputeParams](r, s.gate.APIKey)
	if err != nil {
		return err
	}
	d, err := s.market.Disputes.OpenDispute(r.Context(), p, r.PathValue("execution_id"), in)
	return reply(w, http.StatusCreated, api.NewDisputeInfo(d), err)
}

type responseRequest struct {
	Text string `json:"text"`
}

func (s *Server) respondToDispute(w http.ResponseWriter, r *http.Request) error {
	p, in, err := withBody[responseRequest](r, s.gate.Session)
	if err != nil {
		return err
	}
	d, err := s.market.Disputes.RespondToDispute(r.Context(), p.Wallet, r.PathValue("dispute_id"), in.Text)
	return reply(w, http.StatusOK, api.NewDisputeInfo(d), err)
}

func (s *Server) creatorDisputes(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	ds, err := s.market.Disputes.Disputes(r.Context(), crtx.DisputeQuery{Creator: p.Wallet, Limit: 500})
	return reply(w, http.StatusOK, disputeList(ds), err)
}

func (s *Server) adminDisputes(w http.ResponseWriter, r *http.Request) error {
	q, err := newQuery(r, "status")
	if err != nil {
		return err
	}
	status := q.v.Get("status")
	switch status {
	case "", "open", "upheld", "rejected":
	default:
		return invalid("status must be open, upheld or rejected")
	}
	ds, err := s.market.Disputes.Disputes(r.Context(), crtx.DisputeQuery{Status: status, Limit: 500})
	return reply(w, http.StatusOK, disputeList(ds), err)
}

func (s *Server) resolveDispute(w http.ResponseWriter, r *http.Request) error {
	var in crtx.ResolveParams
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.market.Disputes.ResolveDispute(r.Context(), r.PathValue("dispute_id"), in)
	return reply(w, http.StatusOK, api.NewDisputeInfo(d), err)
}

func (s *Server) verifyCreator(verified bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.market.Listings.SetVerified(r.Context(), r.PathValue("wallet"), verified)
		return reply(w, http.StatusOK, api.NewCreatorProfile(c), err)
	}
}

func (s *Server) suspendAgent(suspended bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, err := s.market.Listings.Suspend(r.Context(), r.PathValue("agent_id"), suspended)
		return reply(w, http.StatusOK, api.NewCreatorAgent(a, s.market.Links()), err)
	}
}
