package http

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/ipfs"
	"github.com/crtx-market/crtx/siwx"
)

// execResponse is the status and body an execute request is answered
// with, for the first time or again for an idempotent replay.
func (s *Server) execResponse(ctx context.Context, e crtx.Execution, result string) (int, any) {
	if e.Async {
		a := api.Accepted{ExecutionID: e.ID, Status: crtx.ExecPending}
		if !e.Status.Final() {
			a.Status = e.Status
		}
		if e.PaidByX402() {
			// Its payer has no API key: it follows the call by signing in
			// with the wallet that paid.
			base := s.market.Config().PublicURL
			ch := s.market.Accounts.SignInWithX(ctx)
			a.Poll = &api.Poll{URL: base + "/v1/executions/" + e.ID, ChallengeURL: base + "/v1/x402/sign-in-with-x", SignInWithX: &ch}
		}
		return http.StatusAccepted, a
	}
	if e.Status == crtx.ExecFailed {
		err := &crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID}
		msg := api.ErrorDetail{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: &e.ID}
		return api.Status(err), api.ErrorBody{Error: msg}
	}
	return http.StatusOK, api.NewExecutionRecord(e, result, s.market.Links())
}

func (s *Server) execute(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("Authorization") == "" && len(s.market.Config().Chains) > 0 {
		// No key: the call may be paid by itself, with x402.
		return s.executePaid(w, r)
	}
	p, err := s.gate.Principal(r)
	if err != nil {
		return err
	}
	if p.Key == nil {
		return crtx.Errorf(crtx.CodeInvalidAPIKey, "executions need an API key (Bearer crtx_live_… or crtx_test_…), not a session")
	}
	in, idem, hash, err := readExecute(r, func(idem string) bool { return idem != "" })
	if err != nil {
		return err
	}
	if !wantsStream(r, in) {
		e, err := s.market.Executions.Execute(r.Context(), p, r.PathValue("agent_id"), in, idem, hash)
		return s.answerExecution(w, r, e, err, idem)
	}
	a := &streamAnswer{w: w}
	deltas, finish := a.relay(r.Context())
	in.Stream, in.Deltas = true, deltas
	e, err := s.market.Executions.Execute(r.Context(), p, r.PathValue("agent_id"), in, idem, hash)
	finish()
	return s.answerStream(w, r, a, e, err, idem)
}

// readExecute reads an execute request's body and its Idempotency-Key,
// with the hash of the request it stands for when hashed says it is
// needed: only a request that may be replayed pays for it.
func readExecute(r *http.Request, hashed func(idem string) bool) (in crtx.ExecuteParams, idem, hash string, err error) {
	// The body is read once for decoding and for the idempotency hash.
	raw, err := io.ReadAll(r.Body)
	if err := tooLarge(err); err != nil {
		return in, "", "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err := decode(r, &in); err != nil {
		return in, "", "", err
	}
	idem = r.Header.Get("Idempotency-Key")
	if len(idem) > crtx.MaxIdempotencyKey {
		return in, "", "", crtx.Errorf(crtx.CodeInvalidRequest, "Idempotency-Key: at most %d characters", crtx.MaxIdempotencyKey)
	}
	if idem != "" {
		idem = crtx.RESTIdempotencyKey(idem)
	}
	if hashed(idem) {
		hash = crtx.RequestHash(r.PathValue("agent_id"), raw)
	}
	return in, idem, hash, nil
}

// answerExecution answers an execute request with the execution it
// started, or again with the first answer of an idempotent replay; idem
// is the request's idempotency key, whose answer is stored.
func (s *Server) answerExecution(w http.ResponseWriter, r *http.Request, e crtx.Execution, err error, idem string) error {
	var replay *crtx.Replay
	if errors.As(err, &replay) {
		w.Header().Set("Idempotent-Replayed", "true")
		if replay.Idempotency.Status != 0 {
			w.Header().Set("Content-Type", "application/json")
			if replay.Idempotency.Status == http.StatusAccepted {
				w.Header().Set("Location", "/v1/executions/"+replay.Execution.ID)
			}
			w.WriteHeader(replay.Idempotency.Status)
			w.Write(replay.Idempotency.Body)
			return nil
		}
		e, err = replay.Execution, nil
	}
	if err != nil {
		return err
	}
	result, err := s.result(r, e)
	if err != nil {
		return err
	}
	status, body := s.execResponse(r.Context(), e, result)
	if status == http.StatusAccepted {
		w.Header().Set("Location", "/v1/executions/"+e.ID)
	}
	if replay == nil {
		s.keepAnswer(r, e, idem, status, body)
	}
	writeJSON(w, status, body)
	return nil
}

// result is e's result, read from the store when e carries only its CID.
func (s *Server) result(r *http.Request, e crtx.Execution) (string, error) {
	if e.ResultCID != "" && e.Result == "" {
		return s.market.Executions.ExecutionResult(r.Context(), e)
	}
	return e.Result, nil
}

// keepAnswer stores the answer to a request with an idempotency key, for
// its retries.
func (s *Server) keepAnswer(r *http.Request, e crtx.Execution, idem string, status int, body any) {
	if idem == "" {
		return
	}
	b, _ := jsonBytes(body)
	// Kept even when the caller has gone: its retry reads it.
	if err := s.market.Executions.CompleteIdempotency(context.WithoutCancel(r.Context()), e.Wallet, e.Environment, idem, status, b); err != nil {
		s.log.Error("complete idempotency", "request_id", gate.RequestID(r), "err", err)
	}
}

// reader authenticates a read of executions: an API key, or a
// SIGN-IN-WITH-X proof of the wallet that paid them with x402.
func (s *Server) reader(r *http.Request) (crtx.Principal, error) {
	switch {
	case r.Header.Get("Authorization") != "":
		return s.gate.APIKey(r)
	case r.Header.Get(siwx.Header) != "":
		return s.market.Accounts.SignedInWithX(r.Context(), r.Header.Get(siwx.Header))
	}
	// No credential: the caller may be a payer without an account.
	return crtx.Principal{}, crtx.Errorf(crtx.CodeAuthenticationRequired, "send Authorization: Bearer <API key>, "+
		"or, for a call paid with x402, a SIGN-IN-WITH-X header: the paying wallet's signature of a challenge from GET /v1/x402/sign-in-with-x (docs/x402.md)")
}

func (s *Server) getExecution(w http.ResponseWriter, r *http.Request) error {
	p, err := s.reader(r)
	if err != nil {
		return err
	}
	e, result, err := s.market.Executions.GetExecution(r.Context(), p, r.PathValue("execution_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.NewExecutionRecord(e, result, s.market.Links()))
	return nil
}

func (s *Server) receipt(w http.ResponseWriter, r *http.Request) error {
	p, err := s.reader(r)
	if err != nil {
		return err
	}
	e, err := s.market.Executions.Receipt(r.Context(), p, r.PathValue("execution_id"))
	if err != nil {
		return err
	}
	rc, err := api.NewReceipt(e, s.market.Links(), s.market.Config().Signer)
	return reply(w, http.StatusOK, rc, err)
}

func (s *Server) ruling(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.APIKey(r)
	if err != nil {
		return err
	}
	e, d, err := s.market.Executions.Ruling(r.Context(), p, r.PathValue("execution_id"))
	if err != nil {
		return err
	}
	rl, err := api.NewRuling(e, d, s.market.Links(), s.market.Config().Signer)
	return reply(w, http.StatusOK, rl, err)
}

var execStatuses = []string{"pending", "running", "completed", "failed", "disputed"}

func (s *Server) listExecutions(w http.ResponseWriter, r *http.Request) error {
	p, err := s.reader(r)
	if err != nil {
		return err
	}
	q, err := newQuery(r, "limit", "offset", "status", "agent_id", "from", "to")
	if err != nil {
		return err
	}
	return s.executionPage(w, r, q, crtx.ExecutionQuery{Wallet: p.Wallet, Environment: p.Environment(), KeyID: p.Connector()})
}

// creatorExecutions lists the executions of the creator's agents, in one
// environment (mainnet unless ?environment=devnet), without the callers' wallets.
func (s *Server) creatorExecutions(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	q, err := newQuery(r, "limit", "offset", "status", "agent_id", "from", "to", "environment")
	if err != nil {
		return err
	}
	env, err := q.env()
	if err != nil {
		return err
	}
	return s.executionPage(w, r, q, crtx.ExecutionQuery{Creator: p.Wallet, Environment: env})
}

func (s *Server) creatorEarnings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	env, err := queryEnv(r)
	if err != nil {
		return err
	}
	e, err := s.market.Funds.CreatorEarnings(r.Context(), p.Wallet, env)
	return reply(w, http.StatusOK, e, err)
}

func (s *Server) executionPage(w http.ResponseWriter, r *http.Request, q query, eq crtx.ExecutionQuery) error {
	var err error
	if eq.Limit, err = q.int("limit", 20, 1, 100); err != nil {
		return err
	}
	if eq.Offset, err = q.int("offset", 0, 0, 1<<30); err != nil {
		return err
	}
	if q.has("status") {
		st := q.v.Get("status")
		found := false
		for _, v := range execStatuses {
			found = found || v == st
		}
		if !found {
			return invalid("status must be one of %s", strings.Join(execStatuses, ", "))
		}
		eq.Status = crtx.ExecStatus(st)
	}
	if q.has("agent_id") {
		eq.AgentID = q.v.Get("agent_id")
	}
	for _, k := range []string{"from", "to"} {
		if !q.has(k) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, q.v.Get(k))
		if err != nil {
			return invalid("%s must be an ISO 8601 time such as 2026-11-22T09:00:00Z", k)
		}
		if k == "from" {
			eq.From = &t
		} else {
			eq.To = &t
		}
	}
	list, total, err := s.market.Executions.Executions(r.Context(), eq)
	if err != nil {
		return err
	}
	page := api.ExecutionPage{Executions: make([]api.ExecutionSummary, len(list)), Page: api.Page{Total: total, Limit: eq.Limit, Offset: eq.Offset}}
	for i, e := range list {
		page.Executions[i] = api.NewExecutionSummary(e, s.market.Links())
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// ipfs serves a result's exact bytes by CID; they never change.
func (s *Server) ipfs(w http.ResponseWriter, r *http.Request) error {
	cid := r.PathValue("cid")
	if !ipfs.ParseCID(cid) {
		return crtx.Errorf(crtx.CodeNotFound, "%q is not a result CID (CIDv1, raw, sha2-256, base32)", cid)
	}
	content, err := s.market.Executions.ResultContent(r.Context(), cid)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	// The bytes are a creator's, served on the dashboards' origin: a
	// browser must run nothing in them, whatever it would sniff.
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("ETag", `"`+cid+`"`)
	w.Write([]byte(content))
	return nil
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.APIKey(r)
	if err != nil {
		return err
	}
	e, err := s.market.Executions.Cancel(r.Context(), p, r.PathValue("execution_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.NewExecutionRecord(e, "", s.market.Links()))
	return nil
}
