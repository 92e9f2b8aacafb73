package exact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
)

// How a payment settles: before the dispatch (Ready), or after the result
// (Close); and how the call ends when it fails.

// settleFirst settles the payment of an execution dispatched after its
// payment: the payment's bytes are sent until they land or can never
// land; once landed, the payment is credited and escrowed in one
// transaction, and the execution is returned ready to dispatch. A payment
// that never lands fails the execution, unpaid. Any process may run it
// again: the bytes land once, and the credit is written once.
func (s scheme) settleFirst(ctx context.Context, e crtx.Execution) (crtx.Execution, error) {
	p, err := crtx.Read(ctx, s.h.Store(), func(tx crtx.Tx) (crtx.Payment, error) { return tx.Funds.PaymentOf(ctx, e.ID) })
	if err != nil {
		return e, fmt.Errorf("payment: %w", err)
	}
	if p.Status == crtx.PaymentSettled || p.Status == crtx.PaymentVoid {
		return e, nil
	}
	c, err := s.h.Chain(e.Environment)
	if err != nil {
		return e, err
	}
	settling := time.Now()
	slot, err := c.SettlePayment(ctx, p.Raw, p.LastValid)
	s.h.Figures().Timed(payment.StageSettle, settling)
	if err != nil && !landedNever(err) {
		// The chain did not say: the execution waits, leased, and this
		// or another process asks again.
		return e, fmt.Errorf("the %s chain did not answer: %w", e.Environment, err)
	}
	if err != nil {
		return s.voidPayment(ctx, e, p, "the x402 payment did not land on the chain ("+crtx.ErrorMessage(err)+")"), nil
	}
	err = s.h.Store().Update(ctx, func(tx crtx.Tx) error {
		return s.credit(ctx, tx, e, p, slot)
	})
	if errors.Is(err, crtx.ErrConflict) {
		err = nil // settled by another process
	}
	if err != nil {
		return e, fmt.Errorf("settle payment: %w", err)
	}
	return e, nil
}

// landedNever reports a settlement that proved the payment never lands:
// it failed on the chain, or its blockhash expired without it.
func landedNever(err error) bool {
	var pe *crtx.PaymentError
	return errors.Is(err, crtx.ErrPaymentNeverLands) || errors.As(err, &pe)
}

// credit writes a landed payment: settled, its amount a Deposit
// from the chain into the payer's wallet, and the execution's EscrowOpened.
func (s scheme) credit(ctx context.Context, tx crtx.Tx, e crtx.Execution, p crtx.Payment, slot uint64) error {
	now := s.h.Now()
	p.Status, p.Slot, p.SettledAt, p.Reply = crtx.PaymentSettled, slot, &now, nil
	if err := tx.Funds.UpdatePayment(ctx, p, crtx.PaymentSent); err != nil {
		return err
	}
	issuance := crtx.NewAccount(e.Environment, crtx.AccountIssuance, crtx.IssuanceID, "")
	wallet := crtx.NewAccount(e.Environment, crtx.AccountWallet, e.Wallet, e.Wallet)
	if _, err := s.h.Post(ctx, tx, e.Environment, crtx.TxDeposit, map[string]string{"wallet": e.Wallet, "x402": "true",
		"signature": p.Signature, "network": p.Network, "execution_id": e.ID, "slot": strconv.FormatUint(slot, 10)},
		[]crtx.Posting{{From: issuance.Address, To: wallet.Address, Amount: p.Amount}}, issuance, wallet); err != nil {
		return err
	}
	_, err := s.h.Post(ctx, tx, e.Environment, crtx.TxEscrowOpened,
		map[string]string{"execution_id": e.ID, "agent_id": e.AgentID, "wallet": e.Wallet},
		// What the call holds, its most if metered: e may be closing
		// already, its cost then the charge.
		[]crtx.Posting{{From: wallet.Address, To: crtx.EscrowAccount(e).Address, Amount: e.Held}}, wallet, crtx.EscrowAccount(e))
	return err
}

// voidPayment fails an execution whose payment, as read (p), was never
// sent or never landed (why says which): nobody paid, nothing moves. If the
// payment moved meanwhile (another process sent it), nothing is written
// and the execution is returned as it is, that process's to finish.
func (s scheme) voidPayment(ctx context.Context, e crtx.Execution, p crtx.Payment, why string) crtx.Execution {
	now := s.h.Now()
	cur := e
	cur.Status, cur.CompletedAt = crtx.ExecFailed, &now
	cur.ErrorCode = crtx.CodePaymentInvalid
	cur.ErrorMessage = why + ": nothing was charged and the agent was not paid"
	err := s.h.Store().Update(ctx, func(tx crtx.Tx) error {
		from := p.Status
		p.Status, p.Reply = crtx.PaymentVoid, nil
		if err := tx.Funds.UpdatePayment(ctx, p, from); err != nil {
			return err
		}
		ok, err := tx.Executions.FinishExecution(ctx, cur)
		if err == nil && !ok {
			return crtx.ErrConflict
		}
		return err
	})
	if err != nil {
		if !errors.Is(err, crtx.ErrConflict) {
			s.h.Logger().Warn("void payment", "execution_id", e.ID, "err", err)
		}
		if cur, err = crtx.Read(ctx, s.h.Store(), func(tx crtx.Tx) (crtx.Execution, error) { return tx.Executions.Execution(ctx, e.ID) }); err != nil {
			return e
		}
		return cur
	}
	s.h.Announce(cur.ID)
	return cur
}

// storedReply is the creator's reply to a call settled after its result,
// kept with the payment while it is sent: whoever finishes the execution
// after a crash settles it with the same result.
type storedReply struct {
	Reply     crtx.CreatorReply `json:"reply"`
	ElapsedMS int64             `json:"elapsed_ms"`
}

// Ready settles what an x402 execution's payment owes before it may be
// dispatched, and reports whether it may; when it may not, the execution
// is returned as it ended (or as it is, for a later turn). fresh is true
// for the request that opened it, which waits for its result.
func (s scheme) Ready(ctx context.Context, e crtx.Execution, fresh bool) (crtx.Execution, bool) {
	p, err := crtx.Read(ctx, s.h.Store(), func(tx crtx.Tx) (crtx.Payment, error) { return tx.Funds.PaymentOf(ctx, e.ID) })
	if err != nil {
		s.h.Logger().Error("read payment", "execution_id", e.ID, "err", err)
		return e, false
	}
	switch {
	case p.Status == crtx.PaymentSent && p.Reply != nil:
		// Its result was in and its payment sent when the process that
		// ran it stopped: it is settled with that result.
		var r storedReply
		if err := json.Unmarshal(p.Reply, &r); err != nil {
			s.h.Logger().Error("stored reply", "execution_id", e.ID, "err", err)
			return e, false
		}
		return s.h.Finish(ctx, e, payment.Outcome{Reply: &r.Reply, Elapsed: time.Duration(r.ElapsedMS) * time.Millisecond}), false
	case p.Status == crtx.PaymentSent:
		e, err = s.settleFirst(ctx, e)
		if err != nil {
			s.h.Logger().Warn("settle payment", "execution_id", e.ID, "err", err)
			return e, false
		}
		return e, !e.Status.Final()
	case p.Status == crtx.PaymentVerified && !fresh:
		// Taken over before its result: the payer's request is gone, and
		// the payment, never sent, is let go.
		return s.voidPayment(ctx, e, p, "the marketplace stopped before the call ended, and the x402 payment was never sent"), false
	case p.Status == crtx.PaymentVoid:
		return e, false
	}
	return e, true
}

// Close closes an x402 execution. One paid before its
// dispatch closes as any execution, and a failed one's refund goes back
// to the payer's token account, queued in the same transaction. One to
// be paid after its result is never paid if it failed; if it completed,
// its payment is sent, the reply kept first, and it is credited, escrowed
// and closed in one transaction once it lands, or failed unpaid if it
// never will.
func (s scheme) Close(ctx context.Context, c *crtx.Closing, o payment.Outcome) (bool, error) {
	e := c.Execution
	p, err := crtx.Read(ctx, s.h.Store(), func(tx crtx.Tx) (crtx.Payment, error) { return tx.Funds.PaymentOf(ctx, e.ID) })
	if err != nil {
		return false, err
	}
	switch {
	case p.Status == crtx.PaymentVoid:
		return false, nil
	case p.Status == crtx.PaymentSettled:
		if e.Status != crtx.ExecCompleted {
			c.Execution.ErrorMessage += "; the x402 payment goes back to the payer's token account on the chain (withdrawal " + crtx.RefundID(e.ID) + ")"
		}
		var ok bool
		err := s.h.Store().Update(ctx, func(tx crtx.Tx) (err error) {
			if ok, err = c.Write(ctx, tx); err != nil || !ok || e.Status == crtx.ExecCompleted {
				return err
			}
			return s.refund(ctx, tx, e, p)
		})
		if ok && e.Status != crtx.ExecCompleted {
			s.h.Figures().Refunded.Add(1)
			s.h.NudgeWithdrawals()
		}
		return ok, err
	case e.Status != crtx.ExecCompleted:
		c.Execution.ErrorMessage += "; the x402 payment was not sent: nothing was charged"
		return s.closeUnpaid(ctx, c, p)
	}
	ch, err := s.h.Chain(e.Environment)
	if err != nil {
		return false, err
	}
	if p.Status == crtx.PaymentVerified {
		// Simulated again before it leaves: a payer that spent its funds
		// while the agent worked gets no result, and the treasury pays no
		// fee for a transfer bound to fail. A node that does not answer
		// proves nothing: the payment is sent, and the chain decides.
		again := crtx.CheckedPayment{Signed: p.Raw, Source: p.Source}
		var pe *crtx.PaymentError
		resimulating := time.Now()
		err := ch.SimulatePayment(ctx, &again)
		s.h.Figures().Timed(payment.StageResimulate, resimulating)
		if errors.As(err, &pe) {
			c.Execution.ResultCID, c.Execution.ResultHash, c.Execution.Signature, c.Execution.Result = "", "", "", ""
			c.Execution.Status, c.Execution.ErrorCode = crtx.ExecFailed, crtx.CodePaymentInvalid
			c.Execution.ErrorMessage = "the agent answered, but the x402 payment would no longer land (" + pe.Message +
				"): the result is withheld, the payment was not sent and nothing was charged"
			return s.closeUnpaid(ctx, c, p)
		}
		r, err := json.Marshal(storedReply{Reply: *o.Reply, ElapsedMS: o.Elapsed.Milliseconds()})
		if err != nil {
			return false, err
		}
		p.Status, p.Reply = crtx.PaymentSent, r
		err = s.h.Store().Update(ctx, func(tx crtx.Tx) error { return tx.Funds.UpdatePayment(ctx, p, crtx.PaymentVerified) })
		if errors.Is(err, crtx.ErrConflict) {
			// Another process let the payment go (it took the execution
			// over): it is never sent, and that process ended the call.
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	settling := time.Now()
	slot, err := ch.SettlePayment(ctx, p.Raw, p.LastValid)
	s.h.Figures().Timed(payment.StageSettle, settling)
	if landedNever(err) {
		c.Execution.ResultCID, c.Execution.ResultHash, c.Execution.Signature, c.Execution.Result = "", "", "", ""
		c.Execution.Status, c.Execution.ErrorCode = crtx.ExecFailed, crtx.CodePaymentInvalid
		c.Execution.ErrorMessage = "the agent answered, but the x402 payment did not land on the chain (" + crtx.ErrorMessage(err) +
			"): the result is withheld and nothing was charged"
		return s.closeUnpaid(ctx, c, p)
	}
	if err != nil {
		// The chain did not say: the execution stays running, leased, and
		// whoever takes it over settles the kept reply.
		return false, err
	}
	var ok bool
	err = s.h.Store().Update(ctx, func(tx crtx.Tx) (err error) {
		if err := s.credit(ctx, tx, e, p, slot); err != nil {
			return err
		}
		if ok, err = c.Write(ctx, tx); err == nil && !ok {
			return crtx.ErrConflict
		}
		return err
	})
	if errors.Is(err, crtx.ErrConflict) {
		return false, nil
	}
	return ok, err
}

// closeUnpaid ends an x402 execution that nobody paid: failed, its payment
// void, no ledger transaction.
func (s scheme) closeUnpaid(ctx context.Context, c *crtx.Closing, p crtx.Payment) (bool, error) {
	c.Record, c.Accounts, c.Execution.RecordTx = crtx.LedgerTx{}, nil, ""
	c.Execution.CreatorAmount, c.Execution.PlatformAmount = 0, 0
	var ok bool
	err := s.h.Store().Update(ctx, func(tx crtx.Tx) (err error) {
		from := p.Status
		p.Status, p.Reply = crtx.PaymentVoid, nil
		if err := tx.Funds.UpdatePayment(ctx, p, from); err != nil {
			return err
		}
		if ok, err = tx.Executions.FinishExecution(ctx, c.Execution); err != nil || !ok {
			return err
		}
		if c.Webhook != nil {
			return tx.Deliveries.InsertWebhook(ctx, *c.Webhook)
		}
		return nil
	})
	if errors.Is(err, crtx.ErrConflict) {
		return false, nil
	}
	return ok, err
}

// refund queues the on-chain refund of a failed x402 execution that
// was paid before its dispatch: a withdrawal of its cost from the payer's
// wallet (where EscrowRefunded put it) to its token account, whose id is
// the execution's, so it is queued once.
func (s scheme) refund(ctx context.Context, tx crtx.Tx, e crtx.Execution, p crtx.Payment) error {
	c, err := s.h.Chain(e.Environment)
	if err != nil {
		return err
	}
	dest, err := c.TokenAccountOf(p.Payer)
	if err != nil {
		return err
	}
	w := crtx.Withdrawal{ID: crtx.RefundID(e.ID), Wallet: p.Payer, Environment: e.Environment, Amount: e.Cost,
		Destination: dest, Status: crtx.WithdrawalPending, CreatedAt: s.h.Now()}
	return s.h.QueueWithdrawal(ctx, tx, w, map[string]string{"execution_id": e.ID, "x402_refund": "true"})
}
