package market

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/siwx"
	"github.com/crtx-market/crtx/x402"
)

// x402: a caller without an account pays one execution with a Solana
// transaction it signs (docs/x402.md). The marketplace is its own
// facilitator: the payment's scheme (payment/exact) checks it, the market
// simulates it and claims it with the execution, and the scheme settles it
// (Ready, Close) before the dispatch or after the result.

// DefaultSettleAfter is how long a synchronous x402 call may take and
// still be settled after its result: well within a Solana blockhash's
// life (150 blocks, about 60 s on mainnet) from the moment the payer read
// it.
const DefaultSettleAfter = 30 * time.Second

// Paid is what an execute request paid with x402 brings beside its body.
type Paid struct {
	Payload x402.PaymentPayload
	// Resource is the URL of the execute request, which the payment must
	// name when it names one.
	Resource string
	// Allow is asked before anything costs an RPC call, with the payer's
	// address: a refusal (rate_limited) ends the request.
	Allow func(payer string) error
	// AllowReplay is asked, with the payer's address, before a payment
	// already claimed is answered to anyone but its proven payer: replays
	// are bounded too, on a budget apart from payments', which the
	// transport keys by who sends them where it can (so that a stranger
	// replaying a wallet's old payments spends no budget of the wallet's).
	AllowReplay func(payer string) error
	// SignIn is the request's SIGN-IN-WITH-X proof, if any: with it, the
	// payer of a payment sent again reads the answer of the call it paid.
	SignIn string
	// Settled, when set, is given a streamed call's PAYMENT-RESPONSE once
	// its payment settled, before its first piece is passed on: the
	// transport's last moment to send it.
	Settled func(x402.SettleResponse)
}

// PaymentRequired says how to pay one call of agent id with x402: an exact
// entry per environment with a chain. It is chain_not_configured when no
// environment has one (the caller then needs an API key).
func (m *X402) PaymentRequired(ctx context.Context, agentID, resource string) (x402.PaymentRequired, error) {
	a, err := m.payableAgent(ctx, agentID)
	if err != nil {
		return x402.PaymentRequired{}, err
	}
	pr := x402.Required(x402.ResourceInfo{URL: resource, Description: a.Name, MimeType: "application/json"})
	// A payer reads its calls by signing in with the wallet that paid.
	pr.Extensions[siwx.Key] = m.market.Accounts.SignInWithX(ctx)
	var down error
	for _, env := range []crtx.Environment{crtx.Mainnet, crtx.Devnet} {
		c := m.cfg.Chains[env]
		if c == nil {
			continue
		}
		reqs, err := m.requirements(ctx, c, a)
		if err != nil {
			down = chainDown(env, err)
			continue
		}
		// A payment follows: the measure of the chain's block time that
		// decides how it settles starts here (one height read a second).
		c.BlockTime(ctx)
		pr.Accepts = append(pr.Accepts, reqs...)
	}
	switch {
	case len(pr.Accepts) > 0:
		return pr, nil
	case down != nil:
		return pr, down
	}
	return pr, crtx.Errorf(crtx.CodeChainNotConfigured, "no environment of this marketplace has a chain: pay with an API key")
}

// requirements are the entries, one per x402 scheme, that pay a call of a
// on c.
func (m *core) requirements(ctx context.Context, c crtx.Chain, a crtx.Agent) ([]x402.PaymentRequirements, error) {
	var reqs []x402.PaymentRequirements
	for _, s := range m.schemes.x402 {
		r, err := s.Requirements(ctx, c, a)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// payableAgent is an agent that takes executions.
func (m *core) payableAgent(ctx context.Context, agentID string) (crtx.Agent, error) {
	a, err := m.agent(ctx, agentID, false)
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && !listed(a)) {
		return a, crtx.Errorf(crtx.CodeAgentNotFound, "no agent %q", agentID)
	}
	if err != nil {
		return a, internal("agent", err)
	}
	if a.Status == crtx.AgentPaused {
		return a, crtx.Errorf(crtx.CodeAgentPaused, "agent %s is paused by its creator", agentID)
	}
	return a, nil
}

// PaidCall is how an x402 execution stands when its request is answered:
// the execution, and what the PAYMENT-RESPONSE header says.
type PaidCall struct {
	Execution crtx.Execution
	Settle    x402.SettleResponse
	// IdempotencyKey is the key the answer is stored under: the
	// Idempotency-Key header's, or the payment-identifier's id.
	IdempotencyKey string
}

// ExecutePaid runs one execution paid by an x402 payment: the payment is
// checked without an RPC call, then rate-limited, simulated and claimed
// with the execution; it is settled after the result or before the
// dispatch (see payment/exact). idemKey is the
// Idempotency-Key header, if any; the payment-identifier extension stands
// for it otherwise.
func (m *X402) ExecutePaid(ctx context.Context, agentID string, in crtx.ExecuteParams, paid Paid, idemKey, requestHash string) (PaidCall, error) {
	acc := paid.Payload.Accepted
	s := m.schemes.x402Named(acc.Scheme)
	if s == nil {
		return PaidCall{}, crtx.PaymentRefused("unsupported_scheme", "scheme %q is not accepted here", acc.Scheme)
	}
	if idemKey == "" {
		id, err := paid.Payload.PaymentID()
		if err != nil {
			return PaidCall{}, err
		}
		idemKey = id
	}
	in, err := m.checkParams(ctx, in, idemKey)
	if err != nil {
		return PaidCall{}, err
	}
	env, c, err := m.paymentChain(ctx, acc.Network)
	if err != nil {
		return PaidCall{}, err
	}
	a, err := m.payableAgent(ctx, agentID)
	if err != nil {
		return PaidCall{}, err
	}
	if err := s.Terms(paid.Payload, paid.Resource, a, c); err != nil {
		return PaidCall{}, err
	}
	if _, metered := a.Metered(); metered {
		// An x402 payment of a metered agent is of its most: no bound of
		// the caller's may hold less than the payment brings.
		if in.MaxPrice != nil {
			return PaidCall{}, crtx.InvalidField("max_price_usdc", "is for calls paid from a balance: an x402 payment pays the listing's most, %s USDC, and what the call does not use is returned to the payer's crtx wallet", a.Hold())
		}
		if in.MaxCost != nil && *in.MaxCost < a.Hold() {
			return PaidCall{}, crtx.Errorf(crtx.CodePriceChanged, "an x402 payment of this agent pays its most, %s USDC, above max_cost_usdc %s (what the call does not use returns to the payer's crtx wallet); nothing was charged", a.Hold(), *in.MaxCost)
		}
	}
	timeout, err := m.callTerms(a, in)
	if err != nil {
		return PaidCall{}, err
	}
	checked := time.Now()
	cp, err := s.Check(paid.Payload, a, c)
	if err != nil {
		return PaidCall{}, err
	}
	m.paying.Timed(payment.StageCheck, checked)
	res := PaidCall{Settle: x402.SettleResponse{Network: acc.Network, Payer: cp.Payer}, IdempotencyKey: idemKey}
	// A retry of a request already answered gets its first answer, and
	// pays nothing again.
	if idemKey != "" {
		if err := m.idempotent(ctx, cp.Payer, env, idemKey, requestHash); err != nil {
			var replay *crtx.Replay
			if errors.As(err, &replay) {
				res.Execution = replay.Execution
				res.Settle = m.settleResponse(ctx, replay.Execution, acc.Network)
			}
			return res, err
		}
	}
	if e, err := m.paidWith(ctx, cp.Signature); err == nil {
		return res, m.paidAgain(ctx, &res, e, paid, a, in)
	} else if !errors.Is(err, crtx.ErrNotFound) {
		return res, internal("payment", err)
	}
	if err := m.unclaimed(ctx, env, cp); err != nil {
		return res, err
	}
	if paid.Allow != nil {
		if err := paid.Allow(cp.Payer); err != nil {
			return res, err
		}
	}
	bound := m.settleAfterOn(ctx, c)
	// A streamed call is paid before its first words: they are no free
	// preview.
	settleFirst := in.Async || in.Stream || in.Deltas != nil || time.Duration(timeout)*time.Second > bound
	if settleFirst {
		if err := m.mayPayFirst(ctx, a, bound); err != nil {
			return res, err
		}
	}
	simulated := time.Now()
	err = c.SimulatePayment(ctx, &cp)
	m.paying.Timed(payment.StageSimulate, simulated)
	if err != nil {
		// A send that raced the first to the claim may simulate once the
		// first has landed ("already processed"): it was charged, and is
		// answered as a payment sent again, never as one that charged
		// nothing.
		if first, ferr := m.paidWith(ctx, cp.Signature); ferr == nil {
			return res, m.paidAgain(ctx, &res, first, paid, a, in)
		}
		var pe *crtx.PaymentError
		if errors.As(err, &pe) {
			if pe.Reason == "insufficient_funds" {
				pe.Message += ": " + m.fundPayer(env, a.Hold())
			}
			return res, err
		}
		return res, chainDown(env, err)
	}
	e := m.newExecution(env, cp.Payer, crtx.X402Key, a, in, timeout)
	p := crtx.Payment{Scheme: s.Name(), Signature: cp.Signature, Environment: env, ExecutionID: e.ID, Payer: cp.Payer, Source: cp.Source, Amount: a.Hold(),
		Network: acc.Network, Raw: cp.Signed, LastValid: cp.LastValid, Status: crtx.PaymentVerified, CreatedAt: e.InitiatedAt}
	if settleFirst {
		// The signed bytes are stored before they are sent.
		p.Status = crtx.PaymentSent
	}
	var release func()
	if !settleFirst {
		if release, err = m.dispatchNow(&e, "; the payment was not sent, nothing was charged: retry in a moment"); err != nil {
			return res, err
		}
	}
	if err := m.openPaid(ctx, e, p, cp.Left, idemKey, requestHash); err != nil {
		if release != nil {
			release()
		}
		if errors.Is(err, errClaimed) {
			// Sent twice at once: the other send claimed it first.
			first, err := m.paidWith(ctx, cp.Signature)
			if err != nil {
				return res, internal("payment", err)
			}
			return res, m.paidAgain(ctx, &res, first, paid, a, in)
		}
		return res, err
	}
	if !settleFirst {
		// Dispatched now; settled, or not, when the result is in.
		res.Execution = m.run(context.WithoutCancel(ctx), e, release, in.Deltas)
		res.Settle = m.settleResponse(ctx, res.Execution, acc.Network)
		return res, unsettled(res.Execution)
	}
	// Held while it settles, so that no recovery here takes it over.
	_, held := m.hold(e.ID, func() {})
	e, ready := s.Ready(context.WithoutCancel(ctx), e, true)
	if held {
		m.letGo(e.ID)
	}
	if !ready && !e.Status.Final() {
		// The payment may land yet: the call goes on then (any replica
		// settles it), and costs nothing if it never does. Its id lets
		// the payer follow it.
		res.Execution = e
		ce := &crtx.Error{Code: crtx.CodeUnavailable, ExecutionID: e.ID, RetryAfter: 5,
			Message: "the chain did not answer while the payment was being settled: if it lands the call runs, and if it never does it costs nothing; follow execution " + e.ID}
		return res, ce
	}
	res.Execution, res.Settle = e, m.settleResponse(ctx, e, acc.Network)
	if e.Status.Final() {
		// The payment never landed: the execution failed unpaid, which an
		// asynchronous call's answer says too, not that it is pending.
		return res, &crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID}
	}
	if e.Async {
		m.jobs.Go(func() { m.run(m.bg, e, nil, nil) })
		return res, nil
	}
	if in.Stream && paid.Settled != nil {
		paid.Settled(m.settleResponse(ctx, e, acc.Network))
	}
	res.Execution = m.run(context.WithoutCancel(ctx), e, nil, in.Deltas)
	res.Settle = m.settleResponse(ctx, res.Execution, acc.Network)
	return res, unsettled(res.Execution)
}

// unsettled is the answer to a synchronous x402 call that did not end
// (its payment's fate was not known yet, or another process took it
// over): where to follow it, not a record that reads as a result.
func unsettled(e crtx.Execution) error {
	if e.Status.Final() {
		return nil
	}
	return &crtx.Error{Code: crtx.CodeUnavailable, ExecutionID: e.ID, RetryAfter: 5,
		Message: "the call's payment is not settled yet: it ends paid with its result, or unpaid; follow execution " + e.ID}
}

// fundPayer says how a payer without the USDC of a call gets it on env's
// chain: the faucet of a local chain, or a transfer into its token account.
func (m *core) fundPayer(env crtx.Environment, price crtx.USDC) string {
	if m.cfg.Faucet != nil && env == crtx.Devnet {
		return fmt.Sprintf("get test USDC on this local chain from the faucet (crtx airdrop %s, or POST /v1/devnet/airdrop), then sign a new payment", price)
	}
	return "send USDC to the payer's wallet on this chain (its token account is made with the first transfer), then sign a new payment"
}

// paymentChain is the environment whose chain network names.
func (m *core) paymentChain(ctx context.Context, network string) (crtx.Environment, crtx.Chain, error) {
	var offered []string
	for _, env := range []crtx.Environment{crtx.Mainnet, crtx.Devnet} {
		c := m.cfg.Chains[env]
		if c == nil {
			continue
		}
		n, err := c.Network(ctx)
		if err != nil {
			return "", nil, chainDown(env, err)
		}
		if n == network {
			return env, c, nil
		}
		offered = append(offered, n)
	}
	return "", nil, crtx.PaymentRefused("invalid_network", "the payment is for network %q; this marketplace accepts %v", network, offered)
}

// unclaimed refuses a payment that names a deposit's reference: the
// deposit watcher would credit the same transfer again.
func (m *core) unclaimed(ctx context.Context, env crtx.Environment, cp crtx.CheckedPayment) error {
	return m.store.View(ctx, func(tx crtx.Tx) error {
		for _, k := range cp.Keys {
			if _, err := tx.Funds.DepositByReference(ctx, k); err == nil {
				return crtx.PaymentRefused("invalid_exact_svm_payload_deposit_reference", "the transaction names a deposit's reference: pay a deposit with its own transfer")
			} else if !errors.Is(err, crtx.ErrNotFound) {
				return err
			}
		}
		return nil
	})
}

// settleAfterOn is the longest synchronous call paid on c settled after
// its result: SettleAfter, or three quarters of a blockhash's life on c as
// measured if that is shorter (a local validator's fast slots), so that a
// payment made just before the call still lands after it; the last
// quarter is for the payer's time between reading its blockhash and
// sending, and for the settlement.
func (m *core) settleAfterOn(ctx context.Context, c crtx.Chain) time.Duration {
	d := DefaultSettleAfter
	if m.cfg.SettleAfter > 0 {
		d = m.cfg.SettleAfter
	}
	if block := c.BlockTime(ctx); block > 0 {
		d = min(d, BlockhashBound(block))
	}
	return d
}

// BlockhashBound is the longest call settled after its result on a chain
// whose blocks take block: three quarters of a blockhash's life there.
func BlockhashBound(block time.Duration) time.Duration {
	return block * crtx.BlockhashBlocks * 3 / 4
}

// openPaid writes an x402 execution with its payment, which claims the
// payment's signature: no escrow yet, as no money has moved. left is what
// the payment's source holds once it lands.
func (m *core) openPaid(ctx context.Context, e crtx.Execution, p crtx.Payment, left crtx.USDC, idemKey, requestHash string) error {
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		if idemKey != "" {
			if err := tx.Executions.InsertIdempotency(ctx, crtx.Idempotency{Wallet: e.Wallet, Environment: e.Environment, Key: idemKey,
				RequestHash: requestHash, ExecutionID: e.ID, CreatedAt: e.InitiatedAt}); err != nil {
				return err
			}
		}
		if err := crtx.CheckTerms(ctx, tx, e); err != nil {
			return err
		}
		if err := tx.Executions.InsertExecution(ctx, e); err != nil {
			return err
		}
		// Read before the insert: on PostgreSQL a refused insert ends the
		// transaction, so the refusal could not be told apart after it.
		if _, err := tx.Funds.Payment(ctx, p.Signature); err == nil {
			return errClaimed
		} else if !errors.Is(err, crtx.ErrNotFound) {
			return err
		}
		// Each payment was simulated alone: those in flight from the same
		// token account must fit in what it holds after this one.
		busy, err := tx.Funds.PaymentsInFlight(ctx, p.Source)
		if err != nil {
			return err
		}
		if busy > left {
			return crtx.PaymentRefused("insufficient_funds", "token account %s holds %s USDC after this payment, less than the %s USDC of its payments in flight; retry once they settle", p.Source, left, busy)
		}
		if err := tx.Funds.InsertPayment(ctx, p); err != nil {
			if errors.Is(err, crtx.ErrConflict) {
				return errClaimed
			}
			return err
		}
		if max := m.cfg.MaxInFlightPerWallet; max > 0 {
			all, _, err := tx.Executions.InFlight(ctx, e.Wallet, e.Environment, e.KeyID)
			if err != nil {
				return err
			}
			if all > max {
				return inFlight("this wallet has %d executions pending or running on %s, its limit; wait for one to end", max, e.Environment)
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errClaimed):
		return err
	case errors.Is(err, crtx.ErrTermsChanged):
		return crtx.PaymentRefused("invalid_exact_svm_payload_amount_mismatch", "the agent's terms changed as the call began; nothing was charged: ask for the payment requirements again")
	case errors.Is(err, crtx.ErrConflict) && idemKey != "":
		if err := m.idempotent(ctx, e.Wallet, e.Environment, idemKey, requestHash); err != nil {
			return err
		}
	}
	return internal("open paid execution", err)
}

// PaymentResponse is the SettleResponse of x402 execution e as it stands,
// for a transport that followed e past the moment ExecutePaid answered (a
// replay of a call still running then).
func (m *X402) PaymentResponse(ctx context.Context, e crtx.Execution, network string) x402.SettleResponse {
	return m.settleResponse(ctx, e, network)
}

// settleResponse is the PAYMENT-RESPONSE of an x402 execution as it
// stands.
func (m *core) settleResponse(ctx context.Context, e crtx.Execution, network string) x402.SettleResponse {
	p, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Payment, error) { return tx.Funds.PaymentOf(ctx, e.ID) })
	if err != nil {
		return x402.SettleResponse{ErrorReason: "unexpected_settle_error", Network: network, Payer: e.Wallet}
	}
	return x402.Settlement(e, p, crtx.RefundID(e.ID))
}
