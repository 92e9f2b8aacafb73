package market

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// Execute starts a paid execution for the API key's wallet (CONTRACT §8):
// the checks in the contract's order, then the execution row and its escrow
// in one transaction. A synchronous execution is dispatched here and
// returned final; an asynchronous one is returned pending and dispatched in
// the background. idemKey and requestHash are empty without Idempotency-Key.
func (m *Executions) Execute(ctx context.Context, p crtx.Principal, agentID string, in crtx.ExecuteParams, idemKey, requestHash string) (crtx.Execution, error) {
	if p.Key == nil {
		return crtx.Execution{}, crtx.Errorf(crtx.CodeInvalidAPIKey, "executions need an API key (Bearer crtx_live_… or crtx_test_…), not a session")
	}
	in, err := m.checkParams(ctx, in, idemKey)
	if err != nil {
		return crtx.Execution{}, err
	}
	// The agent is kept for a second; the store opens the execution only
	// if its terms are still those read, and a change reads them again.
	for attempt := 0; ; attempt++ {
		e, release, err := m.open(ctx, p, agentID, in, idemKey, requestHash, attempt > 0)
		var replay *crtx.Replay
		switch {
		case errors.As(err, &replay):
			return replay.Execution, err
		case errors.Is(err, errRetry) && attempt < 3:
			continue
		case errors.Is(err, errRetry):
			return crtx.Execution{}, internal("execute", fmt.Errorf("%w: %w", crtx.ErrBusy, err))
		case err != nil:
			return crtx.Execution{}, internal("execute", err)
		case e.Async:
			// Its pieces, if the creator streams, go to in.Deltas while
			// this process runs it (a transport following it, as MCP's).
			m.jobs.Go(func() { m.run(m.bg, e, nil, in.Deltas) })
			return e, nil
		}
		return m.run(context.WithoutCancel(ctx), e, release, in.Deltas), nil
	}
}

// checkParams holds an execute request's body to the contract's rules,
// before any agent is read.
func (m *core) checkParams(ctx context.Context, in crtx.ExecuteParams, idemKey string) (crtx.ExecuteParams, error) {
	if in.Task == "" || len(in.Task) > crtx.MaxTaskBytes {
		return in, crtx.Errorf(crtx.CodeInvalidRequest, "task is required, at most %d bytes", crtx.MaxTaskBytes)
	}
	// Every door comes here: what it let through is held to the one rule
	// of text both engines store.
	for _, err := range []error{crtx.CheckText("task", in.Task), crtx.CheckJSONText("parameters", in.Parameters), crtx.CheckText("idempotency key", idemKey)} {
		if err != nil {
			return in, err
		}
	}
	if len(in.Parameters) == 0 || string(in.Parameters) == "null" {
		in.Parameters = json.RawMessage(`{}`)
	}
	if in.Parameters[0] != '{' {
		return in, crtx.Errorf(crtx.CodeInvalidRequest, "parameters must be a JSON object")
	}
	if in.WebhookURL != "" {
		if err := m.cfg.Caller.CheckURL(ctx, "webhook_url", in.WebhookURL); err != nil {
			return in, err
		}
	}
	if len(idemKey) > crtx.MaxStoredIdempotencyKey {
		return in, crtx.Errorf(crtx.CodeInvalidRequest, "Idempotency-Key: at most %d characters", crtx.MaxIdempotencyKey)
	}
	return in, nil
}

// errRetry is open's answer when the execution may open if tried again: the
// agent's terms changed, or an expired Idempotency-Key was let go.
var errRetry = errors.New("try again")

// open checks the request against the agent's terms and opens the
// execution with its escrow (Store.OpenExecution). fresh reads the agent
// from the store rather than from the cache.
func (m *core) open(ctx context.Context, p crtx.Principal, agentID string, in crtx.ExecuteParams, idemKey, requestHash string, fresh bool) (crtx.Execution, func(), error) {
	// A request whose Idempotency-Key was seen gets its first answer,
	// whatever the agent's terms have become since.
	refuse := func(refusal error) error {
		if idemKey != "" {
			if err := m.idempotent(ctx, p.Wallet, p.Key.Environment, idemKey, requestHash); err != nil {
				return err
			}
		}
		return refusal
	}
	a, err := m.agent(ctx, agentID, fresh)
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && !listed(a)) {
		return crtx.Execution{}, nil, refuse(crtx.Errorf(crtx.CodeAgentNotFound, "no agent %q", agentID))
	}
	if err != nil {
		return crtx.Execution{}, nil, err
	}
	if a.Status == crtx.AgentPaused {
		return crtx.Execution{}, nil, refuse(crtx.Errorf(crtx.CodeAgentPaused, "agent %s is paused by its creator", agentID))
	}
	timeout, err := m.callTerms(a, in)
	var ce *crtx.Error
	if errors.As(err, &ce) && ce.Code == crtx.CodePriceChanged {
		return crtx.Execution{}, nil, refuse(err)
	}
	if err != nil {
		return crtx.Execution{}, nil, err
	}

	e := m.newExecution(p.Key.Environment, p.Wallet, p.Key.ID, a, in, timeout)
	o := crtx.Opening{Execution: e}
	if idemKey != "" {
		o.Idempotency = &crtx.Idempotency{Wallet: p.Wallet, Environment: e.Environment, Key: idemKey, RequestHash: requestHash, ExecutionID: e.ID, CreatedAt: e.InitiatedAt}
	}
	wallet := crtx.NewAccount(e.Environment, crtx.AccountWallet, e.Wallet, e.Wallet)
	o.Escrow, o.Accounts = m.ledgerTx(e.Environment, crtx.TxEscrowOpened,
		map[string]string{"execution_id": e.ID, "agent_id": e.AgentID, "wallet": e.Wallet},
		[]crtx.Posting{{From: wallet.Address, To: crtx.EscrowAccount(e).Address, Amount: e.Cost}},
		wallet, crtx.EscrowAccount(e))
	o.MaxKeyInFlight, o.MaxWalletInFlight = m.cfg.MaxInFlightPerKey, m.cfg.MaxInFlightPerWallet
	var release func()
	if !in.Async {
		if release, err = m.dispatchNow(&o.Execution, ", and charged nothing; retry in a moment, or call asynchronously to wait in line"); err != nil {
			return crtx.Execution{}, nil, refuse(err)
		}
		e = o.Execution
	}
	err = m.store.OpenExecution(ctx, &o)
	if err != nil && release != nil {
		release()
	}
	switch {
	case err == nil:
		return e, release, nil
	case errors.Is(err, crtx.ErrKeyInFlight):
		return crtx.Execution{}, nil, inFlight("this API key has %d executions pending or running, its limit; wait for one to end", m.cfg.MaxInFlightPerKey)
	case errors.Is(err, crtx.ErrWalletInFlight):
		return crtx.Execution{}, nil, inFlight("this wallet has %d executions pending or running on %s, its limit; wait for one to end", m.cfg.MaxInFlightPerWallet, e.Environment)
	case errors.Is(err, crtx.ErrTermsChanged):
		return crtx.Execution{}, nil, fmt.Errorf("%w: %w", errRetry, err)
	case errors.Is(err, crtx.ErrConflict) && idemKey != "":
		if err := m.idempotent(ctx, p.Wallet, p.Key.Environment, idemKey, requestHash); err != nil {
			return crtx.Execution{}, nil, err
		}
		return crtx.Execution{}, nil, fmt.Errorf("%w: Idempotency-Key %q expired or was let go", errRetry, idemKey)
	case errors.Is(err, crtx.ErrInsufficientFunds):
		return crtx.Execution{}, nil, m.explain(ctx, &shortfall{env: e.Environment, wallet: e.Wallet, need: e.Cost, deposit: true,
			format: "the wallet has %[1]s USDC available on %[2]s; this execution needs %[3]s USDC", keyID: p.Key.ID})
	case errors.Is(err, crtx.ErrNotFound), errors.Is(err, crtx.ErrSpendLimit):
		// The store refused the key; reading it says why (a limit raised
		// since leaves the refusal as it was).
		if kerr := m.keyRefusal(ctx, p.Key.ID, e.Cost); kerr != nil {
			return crtx.Execution{}, nil, kerr
		}
		return crtx.Execution{}, nil, crtx.Errorf(crtx.CodeSpendLimitExceeded, "this execution would pass the key's spend limit")
	}
	return crtx.Execution{}, nil, err
}

// newExecution is the execution of a call of a at its terms, opened now by
// payer in env with the key keyID: the one place every way of paying
// builds it.
func (m *core) newExecution(env crtx.Environment, payer, keyID string, a crtx.Agent, in crtx.ExecuteParams, timeout int) crtx.Execution {
	now := m.now()
	e := crtx.Execution{ID: crtx.NewUUID(), Environment: env, Wallet: payer, KeyID: keyID, AgentID: a.ID,
		AgentName: a.Name, Creator: a.Creator, EndpointURL: a.EndpointURL, SigningPublicKey: a.SigningPublicKey,
		ListingTx: a.KeyTx, Task: in.Task, Parameters: compactJSON(in.Parameters), TimeoutSeconds: timeout, Async: in.Async,
		Private: in.Private, Cost: a.Price, Base: a.Price, WebhookURL: in.WebhookURL, Status: crtx.ExecPending, InitiatedAt: now,
		Deadline: now.Add(time.Duration(timeout) * time.Second), LeaseUntil: now.Add(m.cfg.Lease), Owner: m.replica}
	if p, ok := a.Metered(); ok {
		// The escrow holds the most, the caller's if lower (callTerms
		// kept it at or above the base); the charge is known at the end.
		e.Per1k, e.Cost = p.Per1k, p.Max
		// Both of the caller's bounds lower the hold: max_cost_usdc is
		// the most it pays too.
		for _, most := range []*crtx.USDC{in.MaxPrice, in.MaxCost} {
			if most != nil {
				e.Cost = min(e.Cost, *most)
			}
		}
	}
	e.Held = e.Cost
	e.CreatorAmount, e.PlatformAmount = m.split(e)
	return e
}

// split divides e's cost between its creator and the platform: a metered
// call's fee rounded up (crtx.SplitCharge), so that no charge of a few
// micro-USDC pays the platform nothing.
func (m *core) split(e crtx.Execution) (creator, platform crtx.USDC) {
	if _, ok := e.Metered(); ok {
		return crtx.SplitCharge(e.Cost, m.cfg.FeeBps)
	}
	return crtx.Split(e.Cost, m.cfg.FeeBps)
}

// dispatchNow marks e, a synchronous call, dispatched as it opens (saving a
// write transaction) and takes its dispatch slot, or refuses it
// unavailable, its message ending with what was charged: a synchronous call is
// dispatched now or not at all, so a caller waiting on it is told at once,
// and charged nothing, rather than left waiting past its timeout.
func (m *core) dispatchNow(e *crtx.Execution, charged string) (release func(), err error) {
	at := e.InitiatedAt
	e.Status, e.DispatchedAt = crtx.ExecRunning, &at
	release, ok := m.slots.take(*e)
	if !ok {
		return nil, &crtx.Error{Code: crtx.CodeUnavailable, RetryAfter: 1,
			Message: "the marketplace has no dispatch slot free for this call now" + charged}
	}
	return release, nil
}

// callTerms checks a call's request against its agent's terms: its
// timeout (returned), its parameters and its price guard.
func (m *core) callTerms(a crtx.Agent, in crtx.ExecuteParams) (int, error) {
	timeout := a.TimeoutSeconds
	if in.TimeoutSeconds != nil {
		if *in.TimeoutSeconds < 1 || *in.TimeoutSeconds > a.TimeoutSeconds {
			return 0, crtx.Errorf(crtx.CodeInvalidRequest, "timeout_seconds must be 1 to %d (the agent's)", a.TimeoutSeconds)
		}
		timeout = *in.TimeoutSeconds
	}
	sch, err := m.compiled(a.InputSchema)
	if err != nil {
		return 0, fmt.Errorf("input schema: %w", err)
	}
	if err := validate(sch, in.Parameters); err != nil {
		return 0, err
	}
	if in.MaxCost != nil && a.Price > *in.MaxCost {
		return 0, crtx.Errorf(crtx.CodePriceChanged, "the price is %s USDC, above max_cost_usdc %s; nothing was charged", a.Price, *in.MaxCost)
	}
	// max_price_usdc bounds what the whole call may cost: a metered
	// call's most, at or above its base; a price per call no higher.
	if in.MaxPrice != nil {
		_, metered := a.Metered()
		switch {
		case metered && *in.MaxPrice < a.Price:
			return 0, crtx.InvalidField("max_price_usdc", "is %s, below the agent's base price %s USDC: a call costs at least its base", *in.MaxPrice, a.Price)
		case !metered && a.Price > *in.MaxPrice:
			return 0, crtx.Errorf(crtx.CodePriceChanged, "the price is %s USDC, above max_price_usdc %s; nothing was charged", a.Price, *in.MaxPrice)
		}
	}
	return timeout, nil
}

// inFlight refuses an execution over an in-flight limit, as a rate limit.
func inFlight(format string, args ...any) error {
	e := crtx.Errorf(crtx.CodeRateLimited, format, args...)
	e.RetryAfter = 1
	return e
}

// agent returns an agent, from the cache unless fresh.
func (m *core) agent(ctx context.Context, id string, fresh bool) (crtx.Agent, error) {
	if a, ok := m.agentCache.get(id, time.Now()); ok && !fresh {
		return a, nil
	}
	a, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Agent, error) { return tx.Catalog.Agent(ctx, id) })
	if err == nil {
		m.agentCache.put(id, a, time.Now())
	}
	return a, err
}

// keyRefusal says why an API key may not pay need — revoked, or past its
// spend limit — and is nil when it may.
func (m *core) keyRefusal(ctx context.Context, keyID string, need crtx.USDC) error {
	key, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.APIKey, error) { return tx.Access.KeyByID(ctx, keyID) })
	switch {
	case errors.Is(err, crtx.ErrNotFound) || (err == nil && key.RevokedAt != nil):
		return crtx.Errorf(crtx.CodeInvalidAPIKey, "the API key was revoked")
	case err != nil:
		return err
	case key.SpendLimit != nil && key.TotalSpent+need > *key.SpendLimit:
		return crtx.Errorf(crtx.CodeSpendLimitExceeded, "this key has spent %s of its %s USDC limit; the execution costs %s",
			key.TotalSpent, *key.SpendLimit, need)
	}
	return nil
}

// idempotent answers a request whose Idempotency-Key is taken (CONTRACT §8):
// with the first request's execution (a *Replay), or an error if the key
// was used with another request or its first request is still running.
// nil means the key had expired, or was let go meanwhile, and is free again.
func (m *core) idempotent(ctx context.Context, wallet string, env crtx.Environment, key, hash string) error {
	return m.store.Update(ctx, func(tx crtx.Tx) error {
		prev, err := tx.Executions.Idempotency(ctx, wallet, env, key)
		switch {
		case errors.Is(err, crtx.ErrNotFound):
			return nil
		case err != nil:
			return err
		case m.now().Sub(prev.CreatedAt) >= crtx.IdempotencyTTL:
			return tx.Executions.DeleteIdempotency(ctx, wallet, env, key)
		case prev.RequestHash != hash:
			return crtx.Errorf(crtx.CodeIdempotencyKeyReused, "Idempotency-Key %q was used with another request in the last 24 hours", key)
		}
		e, err := tx.Executions.Execution(ctx, prev.ExecutionID)
		if err != nil {
			return err
		}
		if prev.Status == 0 && !e.Status.Final() && !e.Async {
			return crtx.Errorf(crtx.CodeIdempotencyInProgress, "the first request with Idempotency-Key %q is still running", key)
		}
		return &crtx.Replay{Idempotency: prev, Execution: e}
	})
}

// CompleteIdempotency stores the response given to the first request.
func (m *Executions) CompleteIdempotency(ctx context.Context, wallet string, env crtx.Environment, key string, status int, body []byte) error {
	return internal("idempotency", m.store.Update(ctx, func(tx crtx.Tx) error {
		return tx.Executions.CompleteIdempotency(ctx, wallet, env, key, status, body)
	}))
}

// GetExecution returns one of the principal's executions in its key's
// environment; anything else is execution_not_found.
func (m *Executions) GetExecution(ctx context.Context, p crtx.Principal, id string) (crtx.Execution, string, error) {
	var e crtx.Execution
	var result string
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		if e, err = ownExecution(ctx, tx, p, id); err != nil {
			return err
		}
		result, err = details(ctx, tx, &e)
		return err
	})
	return e, result, internal("get execution", err)
}

// details reads what an execution's record shows beside its row: its
// dispute and an x402 execution's payment and refund, set on e, and its
// result, returned.
func details(ctx context.Context, tx crtx.Tx, e *crtx.Execution) (string, error) {
	if d, err := tx.Disputes.DisputeByExecution(ctx, e.ID); err == nil {
		e.Dispute = &d
	} else if !errors.Is(err, crtx.ErrNotFound) {
		return "", err
	}
	if err := paymentOf(ctx, tx, e); err != nil {
		return "", err
	}
	if e.ResultCID == "" {
		return "", nil
	}
	return tx.Executions.Result(ctx, e.ResultCID)
}

// ownExecution reads one of the principal's executions in its key's
// environment; anything else is execution_not_found, so ids reveal nothing.
func ownExecution(ctx context.Context, tx crtx.Tx, p crtx.Principal, id string) (crtx.Execution, error) {
	e, err := tx.Executions.Execution(ctx, id)
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && (e.Wallet != p.Wallet || e.Environment != p.Environment() ||
		(p.Connector() != "" && e.KeyID != p.Connector()))) {
		return crtx.Execution{}, crtx.Errorf(crtx.CodeExecutionNotFound, "no execution %q for this key", id)
	}
	return e, err
}

// Executions lists the principal's executions (CONTRACT §9).
func (m *Executions) Executions(ctx context.Context, q crtx.ExecutionQuery) ([]crtx.Execution, int, error) {
	var out []crtx.Execution
	var total int
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		out, total, err = tx.Executions.ListExecutions(ctx, q)
		return err
	})
	return out, total, internal("list executions", err)
}

// ResultContent returns published result bytes by CID: a private
// execution's are not, and answer as unknown ones do.
func (m *Executions) ResultContent(ctx context.Context, cid string) (string, error) {
	s, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (string, error) { return tx.Executions.PublishedResult(ctx, cid) })
	return s, internal("result", missing(err, crtx.CodeNotFound, "no result %s", cid))
}

// ExecutionResult returns the result bytes of e, an execution read for its
// caller, published or private.
func (m *Executions) ExecutionResult(ctx context.Context, e crtx.Execution) (string, error) {
	s, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (string, error) { return tx.Executions.Result(ctx, e.ResultCID) })
	return s, internal("result", missing(err, crtx.CodeNotFound, "no result %s", e.ResultCID))
}

// ResultPreviews are the first n characters of the results of es, by
// execution id, for a list to show beside each (none for one without a
// result).
func (m *Executions) ResultPreviews(ctx context.Context, es []crtx.Execution, n int) (map[string]string, error) {
	out := map[string]string{}
	err := m.store.View(ctx, func(tx crtx.Tx) error {
		for _, e := range es {
			if e.ResultCID == "" {
				continue
			}
			s, err := tx.Executions.ResultStart(ctx, e.ResultCID, n)
			if err != nil {
				return err
			}
			out[e.ID] = s
		}
		return nil
	})
	return out, internal("result previews", err)
}

// Outcomes attaches to each of es what Execution.Charge reads beyond its
// row: a disputed execution's dispute and a failed x402 execution's
// payment, in one read.
func (m *Executions) Outcomes(ctx context.Context, es []crtx.Execution) error {
	err := m.store.View(ctx, func(tx crtx.Tx) error {
		for i := range es {
			e := &es[i]
			switch {
			case e.Status == crtx.ExecDisputed:
				d, err := tx.Disputes.DisputeByExecution(ctx, e.ID)
				if errors.Is(err, crtx.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				e.Dispute = &d
			case e.Status == crtx.ExecFailed && e.PaidByX402():
				p, err := tx.Funds.PaymentOf(ctx, e.ID)
				if err != nil {
					return err
				}
				e.Paid = &p
			}
		}
		return nil
	})
	return internal("outcomes", err)
}
