package market

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
)

// OpenDispute disputes a completed execution of the key's wallet within 72
// hours of its completion (CONTRACT §12): the execution becomes disputed and
// DisputeOpened records a hash of the evidence on the ledger.
func (m *Disputes) OpenDispute(ctx context.Context, p crtx.Principal, executionID string, in crtx.DisputeParams) (crtx.Dispute, error) {
	if p.Key == nil {
		return crtx.Dispute{}, crtx.Errorf(crtx.CodeInvalidAPIKey, "disputes are raised with the API key that paid for the execution")
	}
	switch in.Reason {
	case "hash_mismatch", "fraud", "other":
	default:
		return crtx.Dispute{}, crtx.InvalidField("reason", "must be hash_mismatch, fraud or other")
	}
	if strings.TrimSpace(in.Description) == "" || utf8.RuneCountInString(in.Description) > 10_000 {
		return crtx.Dispute{}, crtx.InvalidField("description", "is required, at most 10,000 characters")
	}
	if len(in.Evidence) == 0 || string(in.Evidence) == "null" {
		in.Evidence = json.RawMessage(`{}`)
	}
	if in.Evidence[0] != '{' || len(in.Evidence) > 64<<10 {
		return crtx.Dispute{}, crtx.InvalidField("evidence", "must be a JSON object of at most 64 KiB")
	}
	evidence := compactJSON(in.Evidence)
	sum := sha256.Sum256(evidence)
	var d crtx.Dispute
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		e, err := ownExecution(ctx, tx, p, executionID)
		if err != nil {
			return err
		}
		if _, err := tx.Disputes.DisputeByExecution(ctx, e.ID); err == nil {
			return &crtx.Error{Code: crtx.CodeDisputeExists, ExecutionID: e.ID, Message: "this execution was disputed already; an execution can be disputed once"}
		} else if !errors.Is(err, crtx.ErrNotFound) {
			return err
		}
		if e.Status != crtx.ExecCompleted {
			return &crtx.Error{Code: crtx.CodeNotDisputable, ExecutionID: e.ID, Message: "only a completed execution can be disputed; this one is " + string(e.Status)}
		}
		now := m.now()
		if now.Sub(*e.CompletedAt) > crtx.DisputeWindow {
			return &crtx.Error{Code: crtx.CodeDisputeWindowClosed, ExecutionID: e.ID,
				Message: "the 72-hour dispute window closed at " + e.CompletedAt.Add(crtx.DisputeWindow).Format(time.RFC3339)}
		}
		d = crtx.Dispute{ID: "dsp_" + crtx.RandomBase62(20), ExecutionID: e.ID, Environment: e.Environment, Wallet: e.Wallet,
			AgentID: e.AgentID, Creator: e.Creator, Reason: in.Reason, Description: in.Description, Evidence: evidence,
			EvidenceHash: "sha256:" + hex.EncodeToString(sum[:]), Status: "open", OpenedAt: now, RespondBy: now.Add(crtx.DisputeResponseTime)}
		if err := tx.Disputes.InsertDispute(ctx, d); err != nil {
			return err
		}
		e.Status = crtx.ExecDisputed
		if err := tx.Executions.UpdateExecution(ctx, e); err != nil {
			return err
		}
		if _, err := m.post(ctx, tx, e.Environment, crtx.TxDisputeOpened, map[string]string{"dispute_id": d.ID, "execution_id": e.ID,
			"agent_id": e.AgentID, "reason": d.Reason, "evidence_hash": d.EvidenceHash}, nil, crtx.EscrowAccount(e)); err != nil {
			return err
		}
		return tx.Catalog.AddAgentStats(ctx, e.AgentID, e.Environment, crtx.AgentStats{Disputes: 1})
	})
	return d, internal("open dispute", err)
}

// RespondToDispute records the creator's answer to an open dispute.
func (m *Disputes) RespondToDispute(ctx context.Context, wallet, id, text string) (crtx.Dispute, error) {
	if strings.TrimSpace(text) == "" || utf8.RuneCountInString(text) > 10_000 {
		return crtx.Dispute{}, crtx.InvalidField("text", "is required, at most 10,000 characters")
	}
	var d crtx.Dispute
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		d, err = tx.Disputes.Dispute(ctx, id)
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && d.Creator != wallet) {
			return crtx.Errorf(crtx.CodeDisputeNotFound, "no dispute %q about your agents", id)
		}
		if err != nil {
			return err
		}
		if d.Status != "open" {
			return crtx.Errorf(crtx.CodeDisputeClosed, "the dispute is %s already", d.Status)
		}
		now := m.now()
		d.Response, d.RespondedAt = text, &now
		return tx.Disputes.UpdateDispute(ctx, d)
	})
	return d, internal("respond to dispute", err)
}

// ResolveDispute applies the operator's ruling (CONTRACT §12). Upheld on
// mainnet: slash from the listing's collateral — at most what is left, else
// refused — refund the caller from the slash, the rest to the treasury; the
// execution stays disputed. Upheld on devnet: the caller is refunded from the
// devnet treasury and the record shows the slash that would have been made.
// Rejected: the execution is completed again.
func (m *Disputes) ResolveDispute(ctx context.Context, id string, in crtx.ResolveParams) (crtx.Dispute, error) {
	var slash, refund crtx.USDC
	switch in.Outcome {
	case "rejected":
		if (in.Slash != nil && *in.Slash != 0) || (in.Refund != nil && *in.Refund != 0) {
			return crtx.Dispute{}, crtx.InvalidField("outcome", "a rejected dispute slashes and refunds nothing")
		}
	case "upheld":
		if in.Slash != nil {
			slash = *in.Slash
		}
		if in.Refund != nil {
			refund = *in.Refund
		}
		if refund > slash {
			return crtx.Dispute{}, crtx.InvalidField("refund_usdc", "the refund comes from the slash, so it is at most slash_usdc")
		}
	default:
		return crtx.Dispute{}, crtx.InvalidField("outcome", "must be upheld or rejected")
	}
	var d crtx.Dispute
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		d, err = tx.Disputes.Dispute(ctx, id)
		if err != nil {
			return missing(err, crtx.CodeDisputeNotFound, "no dispute %q", id)
		}
		if d.Status != "open" {
			return crtx.Errorf(crtx.CodeDisputeClosed, "the dispute is %s already", d.Status)
		}
		e, err := tx.Executions.Execution(ctx, d.ExecutionID)
		if err != nil {
			return err
		}
		now := m.now()
		d.Status, d.ResolvedAt, d.Slashed, d.Refunded = in.Outcome, &now, slash, refund
		if in.Outcome == "rejected" {
			e.Status = crtx.ExecCompleted
			if err := tx.Executions.UpdateExecution(ctx, e); err != nil {
				return err
			}
		} else if err := m.slash(ctx, tx, d, e); err != nil {
			return err
		} else if refund > 0 {
			// What the key spent on the call is what it cost in the end; a
			// refund past the price comes from the slash, not the key.
			if err := tx.Access.RefundKeyUsage(ctx, e.KeyID, min(refund, e.Cost)); err != nil {
				return err
			}
		}
		if err := tx.Disputes.UpdateDispute(ctx, d); err != nil {
			return err
		}
		_, err = m.post(ctx, tx, e.Environment, crtx.TxDisputeResolved, map[string]string{"dispute_id": d.ID, "execution_id": e.ID,
			"outcome": d.Status, "slashed_usdc": slash.String(), "refunded_usdc": refund.String()}, nil, crtx.EscrowAccount(e))
		return err
	})
	return d, internal("resolve dispute", err)
}

func (m *core) slash(ctx context.Context, tx crtx.Tx, d crtx.Dispute, e crtx.Execution) error {
	caller := crtx.NewAccount(e.Environment, crtx.AccountWallet, e.Wallet, e.Wallet)
	treasury := crtx.NewAccount(e.Environment, crtx.AccountTreasury, crtx.TreasuryID, "")
	data := map[string]string{"dispute_id": d.ID, "execution_id": e.ID, "agent_id": e.AgentID,
		"slashed_usdc": d.Slashed.String(), "refunded_usdc": d.Refunded.String()}
	if e.Environment == crtx.Devnet {
		// No collateral on devnet: the treasury refunds; the slash is recorded only.
		if d.Refunded == 0 {
			return nil
		}
		_, err := m.post(ctx, tx, crtx.Devnet, crtx.TxCollateralSlashed, data,
			[]crtx.Posting{{From: treasury.Address, To: caller.Address, Amount: d.Refunded}}, treasury, caller)
		return err
	}
	coll := crtx.NewAccount(crtx.Mainnet, crtx.AccountCollateral, e.AgentID, e.Creator)
	left, err := tx.Ledger.Account(ctx, crtx.Mainnet, coll.Address)
	if err != nil {
		return err
	}
	if d.Slashed > left.Balance {
		return crtx.InvalidField("slash_usdc", "%s USDC is more than the %s USDC of collateral left; slash at most that", d.Slashed, left.Balance)
	}
	var ps []crtx.Posting
	if d.Refunded > 0 {
		ps = append(ps, crtx.Posting{From: coll.Address, To: caller.Address, Amount: d.Refunded})
	}
	if rest := d.Slashed - d.Refunded; rest > 0 {
		ps = append(ps, crtx.Posting{From: coll.Address, To: treasury.Address, Amount: rest})
	}
	if len(ps) == 0 {
		return nil
	}
	_, err = m.post(ctx, tx, crtx.Mainnet, crtx.TxCollateralSlashed, data, ps, coll, caller, treasury, listingAccountOf(e))
	return err
}

// Disputes lists disputes by status ("" for all), for the operator.
func (m *Disputes) Disputes(ctx context.Context, q crtx.DisputeQuery) ([]crtx.Dispute, error) {
	out, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.Dispute, error) { return tx.Disputes.ListDisputes(ctx, q) })
	return out, internal("list disputes", err)
}
