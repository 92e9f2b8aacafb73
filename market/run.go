package market

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/ipfs"
	"github.com/crtx-market/crtx/payment"
)

// run dispatches e to its creator until an answer, a definitive failure or
// the deadline, then settles or refunds it. It holds e's lease (leases)
// from the start, so no other process — nor this one — takes e over while
// this one waits for a dispatch slot or works on e, and this process runs
// e once. release gives back the slot e holds already (nil: it waits for
// one). A streamed reply's pieces go to deltas (nil: nowhere). It
// returns the execution as it ended (or as it is, if another
// process finished it first, this one runs it already, or the market
// stopped before a slot was free).
func (m *core) run(ctx context.Context, e crtx.Execution, release func(), deltas func(executionID, text string)) crtx.Execution {
	// This frame stays on the stack of a synchronous call's handler while
	// the creator answers, beneath net/http's and above the dispatch's:
	// it keeps no copy of e but the one it points to, so that the deepest
	// work of a call (signing its request, reading its stream, verifying
	// its reply) fits the handler's 16 KiB stack and the stack held by a
	// call in flight does not double to 32 KiB (docs/performance.md).
	if release != nil {
		defer release()
	}
	// The deadline is on the market's clock; the context counts what is left.
	ctx, cancel := context.WithTimeout(ctx, e.Deadline.Sub(m.now()))
	defer cancel()
	dctx, cancelDispatch := context.WithCancel(ctx)
	defer cancelDispatch()
	l, ok := m.hold(e.ID, cancelDispatch)
	if !ok {
		return e
	}
	defer m.letGo(e.ID)
	x := &e
	rel, ok := m.begin(ctx, dctx, x, l, release != nil)
	if !ok {
		return *x
	}
	if rel != nil {
		defer rel()
	}
	// The pieces are kept while the call runs, for a stream cut short to
	// resume from (Pieces), and given to deltas as they come.
	defer m.streamed.end(x.ID)
	o := m.dispatch(dctx, x, func(text string) {
		m.streamed.add(x.ID, text)
		if deltas != nil {
			deltas(x.ID, text)
		}
	})
	if l.lost.Load() {
		m.streamed.drop(x.ID)
		m.cfg.Logger.Warn("execution taken over by another replica", "execution_id", x.ID)
		return *x
	}
	m.finish(context.WithoutCancel(ctx), x, o)
	return *x
}

// begin readies e for its dispatch: what its payment owes first, its
// deadline, a dispatch slot when it holds none yet (held), its mark as
// running. It returns the slot's release (nil when held), or false with
// e as run returns it.
func (m *core) begin(ctx, dctx context.Context, e *crtx.Execution, l *lease, held bool) (release func(), ok bool) {
	// What the payment owes before the dispatch is settled first (an
	// x402 payment sent, or proven never to land): money may have moved
	// whatever the clock says, so without the deadline (a payment's own
	// bound is its blockhash's life).
	s, err := m.schemeOf(context.WithoutCancel(ctx), *e)
	if err != nil {
		m.cfg.Logger.Error("payment scheme", "execution_id", e.ID, "err", err)
		return nil, false
	}
	if *e, ok = s.Ready(context.WithoutCancel(ctx), *e, held); !ok {
		return nil, false
	}
	if !m.now().Before(e.Deadline) {
		m.finish(context.WithoutCancel(ctx), e, outcome{code: crtx.CodeExecutionTimeout,
			message: fmt.Sprintf("no answer from the agent within %d seconds", e.TimeoutSeconds)})
		return nil, false
	}
	if !held {
		// Meanwhile the execution is pending and can be cancelled; a
		// cancellation loses the lease, and so ends the wait.
		if release, err = m.slots.wait(dctx, *e); err != nil {
			if !l.lost.Load() && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				m.finish(context.WithoutCancel(ctx), e, outcome{code: crtx.CodeExecutionTimeout,
					message: "the marketplace had no free dispatch slot before the deadline"})
			}
			// Otherwise cancelled, taken over, or the market stopped: the
			// execution is someone else's, or the next start's.
			return nil, false
		}
	}
	// A synchronous execution was marked dispatched with its escrow, and a
	// claimed one holds a fresh lease; anything else is marked now.
	if e.Status != crtx.ExecRunning || e.DispatchedAt == nil {
		started, err := m.markRunning(ctx, *e)
		if err != nil || started.Status.Final() || started.Owner != m.replica {
			if err != nil {
				m.cfg.Logger.Error("mark running", "execution_id", e.ID, "err", err)
			}
			if release != nil {
				release()
			}
			*e = started
			return nil, false
		}
		*e = started
	}
	return release, true
}

// markRunning records the dispatch (status running, dispatched_at once)
// while this replica owns the execution: one that another replica took
// over is returned as it is, that replica's to run.
func (m *core) markRunning(ctx context.Context, e crtx.Execution) (crtx.Execution, error) {
	var cur crtx.Execution
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		cur, err = tx.Executions.Execution(ctx, e.ID)
		if err != nil || cur.Status.Final() || cur.Owner != m.replica {
			return err
		}
		now := m.now()
		cur.Status = crtx.ExecRunning
		if cur.DispatchedAt == nil {
			cur.DispatchedAt = &now
		}
		cur.LeaseUntil = now.Add(m.cfg.Lease)
		return tx.Executions.UpdateExecution(ctx, cur)
	})
	if err == nil && !cur.Status.Final() && cur.Owner == m.replica {
		m.announce(cur.ID)
	}
	return cur, err
}

// outcome is how a dispatch ended: a checked completed reply, or a failure
// with the error code the execution fails with.
type outcome struct {
	reply   *crtx.CreatorReply
	code    string
	message string
	elapsed time.Duration
}

// unreachableFor is how long a dispatch that gets no response at all
// (refused, reset) is retried: long enough for a service that restarts,
// short against the deadline, so that a service that is down fails the
// call fast instead of holding it (and its escrow) to its timeout.
const unreachableFor = 3 * time.Second

// dispatch calls the creator, retrying only when no response came at all,
// and only for unreachableFor, and judges the reply.
func (m *core) dispatch(ctx context.Context, e *crtx.Execution, deltas func(string)) outcome {
	req := crtx.CreatorRequest{ExecutionID: e.ID, Task: e.Task, Parameters: e.Parameters, UserPubkey: e.Wallet,
		TimeoutSeconds: int(e.Deadline.Sub(m.now()).Round(time.Second) / time.Second)}
	if req.TimeoutSeconds < 1 {
		req.TimeoutSeconds = 1
	}
	if p, metered := e.Metered(); metered {
		// What the hold pays for, so that the creator knows where to
		// stop: usage beyond it is not charged.
		n := p.MaxTokens()
		req.MaxTokens = &n
	}
	start := time.Now()
	backoff := 50 * time.Millisecond
	for {
		attempt := time.Now()
		reply, err := m.cfg.Caller.Call(ctx, e.EndpointURL,
			crtx.RequestScope{AgentID: e.AgentID, SigningKey: e.SigningPublicKey, Environment: e.Environment}, req, deltas)
		m.tally.dispatched(e.Environment, time.Since(attempt))
		elapsed := time.Since(start)
		var ce *crtx.CallError
		o := outcome{code: crtx.CodeExecutionTimeout, message: fmt.Sprintf("no answer from the agent within %d seconds", e.TimeoutSeconds)}
		switch {
		case err == nil:
			return m.judge(e, req, reply, elapsed)
		case errors.As(err, &ce) && ce.NoResponse && ctx.Err() == nil:
			if elapsed < unreachableFor {
				select {
				case <-time.After(backoff):
					backoff = min(backoff*2, time.Second)
					continue
				case <-ctx.Done():
				}
			}
			// Nothing answered: the cause in words, not a timeout.
			o = outcome{code: crtx.CodeAgentUnreachable, message: ce.Message}
		case errors.As(err, &ce) && ce.Code == crtx.CodeInvalidAgentResponse:
			o = outcome{code: crtx.CodeInvalidAgentResponse, message: ce.Message}
		}
		// The detail names the creator's endpoint, which is theirs to keep:
		// it goes to the log, and callers read a stable message.
		m.cfg.Logger.Warn("dispatch", "execution_id", e.ID, "err", err)
		return o
	}
}

func (m *core) judge(e *crtx.Execution, req crtx.CreatorRequest, r crtx.CreatorReply, elapsed time.Duration) outcome {
	pub, err := crtx.ParseAddress("signing_public_key", e.SigningPublicKey)
	if err != nil {
		return outcome{code: crtx.CodeInvalidSignature, message: "the listing's signing key is not valid"}
	}
	if err := crtx.CheckReply(req, r, ed25519.PublicKey(pub)); err != nil {
		var p *crtx.ReplyProblem
		if errors.As(err, &p) {
			return outcome{code: p.Kind, message: p.Message}
		}
		return outcome{code: crtx.CodeInvalidAgentResponse, message: err.Error()}
	}
	if r.Status == "failed" {
		if r.ErrorCode != nil && *r.ErrorCode == crtx.CodeInvalidInput {
			return outcome{code: crtx.CodeInvalidInput, message: "the agent refused the input: " + *r.Error, elapsed: elapsed}
		}
		return outcome{code: crtx.CodeExecutionFailed, message: "the agent failed: " + *r.Error, elapsed: elapsed}
	}
	// A metered call is charged from the usage its creator signs: a reply
	// that does not sign it is refused, and the call refunded.
	if _, metered := e.Metered(); metered {
		var p *crtx.ReplyProblem
		if errors.As(crtx.CheckUsage(r, ed25519.PublicKey(pub)), &p) {
			return outcome{code: p.Kind, message: p.Message}
		}
	}
	return outcome{reply: &r, elapsed: elapsed}
}

// finish settles a completed execution or refunds a failed one, in the
// transaction that makes it final (Store.CloseExecution), and sets e to it
// final. If the execution is final already (another process got there
// first), nothing moves and e is set as that process left it. e is the
// execution as this process dispatched it: what finishing writes (the
// outcome) is not written by anyone else before the execution is final.
func (m *core) finish(ctx context.Context, e *crtx.Execution, o outcome) {
	cur := *e
	now := m.now()
	cur.CompletedAt = &now
	if cur.DispatchedAt != nil && o.elapsed == 0 {
		o.elapsed = now.Sub(*cur.DispatchedAt)
	}
	ms := o.elapsed.Milliseconds()
	cur.ExecutionTimeMS = &ms
	c := crtx.Closing{}
	if _, metered := cur.Metered(); metered && o.reply != nil && (o.reply.TokensUsed == nil || o.reply.UsageSignature == nil) {
		// judge refuses such a reply; one that reached here otherwise (a
		// kept reply) is not charged without the usage it signs.
		o = outcome{code: crtx.CodeInvalidAgentResponse, message: "a metered agent's completed reply must carry tokens_used and usage_signature", elapsed: o.elapsed}
	}
	if o.reply == nil {
		cur.Status, cur.ErrorCode, cur.ErrorMessage = crtx.ExecFailed, o.code, o.message
	} else {
		r := o.reply
		cur.Status, cur.ResultHash, cur.Signature, cur.TokensUsed = crtx.ExecCompleted, *r.ResultHash, *r.Signature, r.TokensUsed
		cur.ResultCID, cur.Result = ipfs.CID(*r.Result), *r.Result
		if p, metered := cur.Metered(); metered {
			// Charged from the signed usage (judge checked it); the rest
			// of the hold returns with the record (closingTx).
			cur.Cost, cur.UsageSignature = p.Charge(*r.TokensUsed), *r.UsageSignature
			cur.CreatorAmount, cur.PlatformAmount = m.split(cur)
		}
	}
	// The agent's statistics are counted from the closing ledger
	// transaction by the roll-up (Rollup), not here: every execution of
	// the agent would write its row.
	c.Record, c.Accounts = m.closingTx(cur)
	cur.RecordTx = c.Record.ID
	c.Execution = cur
	if cur.WebhookURL != "" {
		c.Webhook = &crtx.Webhook{ExecutionID: cur.ID, URL: cur.WebhookURL, NextAt: now, CreatedAt: now}
	}
	s, err := m.schemeOf(ctx, *e)
	var ok bool
	if err == nil {
		ok, err = s.Close(ctx, &c, payment.Outcome{Reply: o.reply, Elapsed: o.elapsed})
	}
	cur = c.Execution
	if ok {
		m.tally.end(cur)
		m.announce(cur.ID)
	}
	if err == nil && !ok {
		err = m.store.View(ctx, func(tx crtx.Tx) (err error) {
			cur, err = tx.Executions.Execution(ctx, e.ID)
			return err
		})
	}
	if err != nil {
		// The row stays in flight; its lease runs out and recovery ends it.
		m.cfg.Logger.Error("finish execution", "execution_id", e.ID, "err", err)
		return
	}
	*e = cur
}

// closingTx is the ledger transaction that closes a final execution's escrow:
// for a completed one its ExecutionRecord, which pays the creator and the
// platform and commits the result hash and the creator's signature (the
// credits are applied by the roll-up, DefersCredits, which also counts the
// execution's time from the record); for a failed one the EscrowRefunded
// that returns the escrow to the caller.
func (m *core) closingTx(e crtx.Execution) (crtx.LedgerTx, []crtx.Account) {
	escrow := crtx.EscrowAccount(e)
	if e.Status != crtx.ExecCompleted {
		wallet := crtx.NewAccount(e.Environment, crtx.AccountWallet, e.Wallet, e.Wallet)
		return m.ledgerTx(e.Environment, crtx.TxEscrowRefunded, byCreator(e, map[string]string{
			"execution_id": e.ID, "agent_id": e.AgentID, "error_code": e.ErrorCode, "status": string(crtx.ExecFailed),
		}), []crtx.Posting{{From: escrow.Address, To: wallet.Address, Amount: e.Cost}}, escrow, wallet)
	}
	creator := crtx.NewAccount(e.Environment, crtx.AccountWallet, e.Creator, e.Creator)
	treasury := crtx.NewAccount(e.Environment, crtx.AccountTreasury, crtx.TreasuryID, "")
	accounts := []crtx.Account{escrow, creator, treasury}
	var ps []crtx.Posting
	if e.CreatorAmount > 0 {
		ps = append(ps, crtx.Posting{From: escrow.Address, To: creator.Address, Amount: e.CreatorAmount})
	}
	if e.PlatformAmount > 0 {
		ps = append(ps, crtx.Posting{From: escrow.Address, To: treasury.Address, Amount: e.PlatformAmount})
	}
	data := map[string]string{
		"execution_id": e.ID, "agent_id": e.AgentID, "result_hash": e.ResultHash, "signature": e.Signature,
		"signing_public_key": e.SigningPublicKey, "listing_tx": e.ListingTx, "cid": e.ResultCID,
		"status": string(crtx.ExecCompleted), "execution_time_ms": strconv.FormatInt(*e.ExecutionTimeMS, 10),
	}
	if e.Private {
		// The hash alone lets the caller prove the result they hold; a
		// CID would only tell the world where to ask for it.
		delete(data, "cid")
	}
	if p, metered := e.Metered(); metered {
		// What anyone needs to check the charge from the creator's own
		// signature: the prices, the hold, the signed usage.
		data["price_per_call_usdc"], data["price_per_1k_tokens_usdc"], data["held_usdc"] = p.Base.String(), p.Per1k.String(), p.Max.String()
		data["tokens_used"], data["usage_signature"] = strconv.FormatInt(*e.TokensUsed, 10), e.UsageSignature
		if back := e.Returned(); back > 0 {
			wallet := crtx.NewAccount(e.Environment, crtx.AccountWallet, e.Wallet, e.Wallet)
			ps = append(ps, crtx.Posting{From: escrow.Address, To: wallet.Address, Amount: back})
			accounts = append(accounts, wallet)
			data["returned_to"] = wallet.Address
		}
	}
	return m.ledgerTx(e.Environment, crtx.TxExecutionRecord, byCreator(e, data), ps, accounts...)
}

// byCreator marks the closing data of an execution the agent's creator
// paid for ("by_creator": "true"), which the agent's public statistics
// leave out: a creator calling its own agent pays itself all but the fee,
// and would otherwise buy executions, a success rate and a latency.
func byCreator(e crtx.Execution, data map[string]string) map[string]string {
	if e.Wallet == e.Creator {
		data["by_creator"] = "true"
	}
	return data
}

// listingAccountOf is the listing account of an execution's agent.
func listingAccountOf(e crtx.Execution) crtx.Account {
	return crtx.NewAccount(e.Environment, crtx.AccountListing, e.AgentID, e.Creator)
}

// RunWorker takes over executions whose lease ran out or whose owner went
// silent — after a crash, or from a replica that stopped — every interval
// until ctx ends: while time
// is left it dispatches them again with the same execution_id, else it
// fails and refunds them.
func (m *Market) RunWorker(ctx context.Context, interval time.Duration) {
	every(ctx, interval, true, m.recover)
}

func (m *core) recover(ctx context.Context) { m.claim(ctx, false) }

// claim takes over the executions whose lease ran out or whose owner went
// silent (all: every one in flight) and runs them.
func (m *core) claim(ctx context.Context, all bool) {
	for {
		var claimed []crtx.Execution
		err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
			now := m.now()
			replicas, err := tx.System.Replicas(ctx)
			if err != nil {
				return err
			}
			var silent []string
			if all {
				// Every other replica counts as gone; this one's own
				// executions are never claimed, so the loop ends.
				for id := range replicas {
					silent = append(silent, id)
				}
			} else {
				silent = m.beats.silent(replicas, now, m.cfg.Heartbeat)
			}
			claimed, err = tx.Executions.ClaimExecutions(ctx, m.replica, now, now.Add(m.cfg.Lease), silent, 32)
			return err
		})
		if m.failed(ctx, err, "claim executions") {
			return
		}
		for _, e := range claimed {
			if m.holds(e.ID) {
				// This process runs it already: its renewals stalled
				// past the lease, and the claim renewed it instead.
				continue
			}
			m.cfg.Logger.Info("recovering execution", "execution_id", e.ID, "attempt", e.Attempts)
			m.jobs.Go(func() { m.run(m.bg, e, nil, nil) })
		}
		if len(claimed) < 32 {
			return
		}
	}
}

// Stop ends background dispatches and waits for them; their executions'
// leases run out and the next start (or another replica) finishes them.
func (m *Market) Stop() {
	m.stop()
	m.jobs.Wait()
}
