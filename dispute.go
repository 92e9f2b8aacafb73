package crtx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// DisputeWindow is how long after completion an execution can be disputed,
// and DisputeResponseTime how long the creator has to answer (seed "Limits").
const (
	DisputeWindow       = 72 * time.Hour
	DisputeResponseTime = 72 * time.Hour
)

// Dispute is a caller's claim that an execution's result was wrong.
type Dispute struct {
	ID           string
	ExecutionID  string
	Environment  Environment
	Wallet       string
	AgentID      string
	Creator      string
	Reason       string
	Description  string
	Evidence     json.RawMessage
	EvidenceHash string
	Status       string // open, upheld, rejected
	OpenedAt     time.Time
	RespondBy    time.Time
	Response     string
	RespondedAt  *time.Time
	ResolvedAt   *time.Time
	Slashed      USDC
	Refunded     USDC
}

// NewDisputeView is the dispute as execution records show it (CONTRACT §9).
func NewDisputeView(d Dispute) *DisputeView {
	return &DisputeView{DisputeID: d.ID, Status: d.Status, Reason: d.Reason, OpenedAt: d.OpenedAt,
		ResolvedAt: d.ResolvedAt, Slashed: d.Slashed, Refunded: d.Refunded}
}

// DisputeParams open a dispute.
type DisputeParams struct {
	Reason      string          `json:"reason"`
	Description string          `json:"description"`
	Evidence    json.RawMessage `json:"evidence"`
}

// OpenDispute disputes a completed execution of the key's wallet within 72
// hours of its completion (CONTRACT §12): the execution becomes disputed and
// DisputeOpened records a hash of the evidence on the ledger.
func (m *Market) OpenDispute(ctx context.Context, p Principal, executionID string, in DisputeParams) (Dispute, error) {
	if p.Key == nil {
		return Dispute{}, Errorf(CodeInvalidAPIKey, "disputes are raised with the API key that paid for the execution")
	}
	switch in.Reason {
	case "hash_mismatch", "fraud", "other":
	default:
		return Dispute{}, invalidField("reason", "must be hash_mismatch, fraud or other")
	}
	if strings.TrimSpace(in.Description) == "" || utf8.RuneCountInString(in.Description) > 10_000 {
		return Dispute{}, invalidField("description", "is required, at most 10,000 characters")
	}
	if len(in.Evidence) == 0 || string(in.Evidence) == "null" {
		in.Evidence = json.RawMessage(`{}`)
	}
	if in.Evidence[0] != '{' || len(in.Evidence) > 64<<10 {
		return Dispute{}, invalidField("evidence", "must be a JSON object of at most 64 KiB")
	}
	evidence := compactJSON(in.Evidence)
	sum := sha256.Sum256(evidence)
	var d Dispute
	err := m.store.Update(ctx, func(tx Tx) error {
		e, err := ownExecution(ctx, tx, p, executionID)
		if err != nil {
			return err
		}
		if _, err := tx.DisputeByExecution(ctx, e.ID); err == nil {
			return &Error{Code: CodeDisputeExists, ExecutionID: e.ID, Message: "this execution was disputed already; an execution can be disputed once"}
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if e.Status != ExecCompleted {
			return &Error{Code: CodeNotDisputable, ExecutionID: e.ID, Message: "only a completed execution can be disputed; this one is " + string(e.Status)}
		}
		now := m.now()
		if now.Sub(*e.CompletedAt) > DisputeWindow {
			return &Error{Code: CodeDisputeWindowClosed, ExecutionID: e.ID,
				Message: "the 72-hour dispute window closed at " + e.CompletedAt.Add(DisputeWindow).Format(time.RFC3339)}
		}
		d = Dispute{ID: "dsp_" + RandomBase62(20), ExecutionID: e.ID, Environment: e.Environment, Wallet: e.Wallet,
			AgentID: e.AgentID, Creator: e.Creator, Reason: in.Reason, Description: in.Description, Evidence: evidence,
			EvidenceHash: "sha256:" + hex.EncodeToString(sum[:]), Status: "open", OpenedAt: now, RespondBy: now.Add(DisputeResponseTime)}
		if err := tx.InsertDispute(ctx, d); err != nil {
			return err
		}
		e.Status = ExecDisputed
		if err := tx.UpdateExecution(ctx, e); err != nil {
			return err
		}
		if _, err := m.post(ctx, tx, e.Environment, TxDisputeOpened, map[string]string{"dispute_id": d.ID, "execution_id": e.ID,
			"agent_id": e.AgentID, "reason": d.Reason, "evidence_hash": d.EvidenceHash}, nil, escrowAccount(e)); err != nil {
			return err
		}
		return tx.AddAgentStats(ctx, e.AgentID, e.Environment, AgentStats{Disputes: 1})
	})
	return d, internal("open dispute", err)
}

// RespondToDispute records the creator's answer to an open dispute.
func (m *Market) RespondToDispute(ctx context.Context, wallet, id, text string) (Dispute, error) {
	if strings.TrimSpace(text) == "" || utf8.RuneCountInString(text) > 10_000 {
		return Dispute{}, invalidField("text", "is required, at most 10,000 characters")
	}
	var d Dispute
	err := m.store.Update(ctx, func(tx Tx) (err error) {
		d, err = tx.Dispute(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && d.Creator != wallet) {
			return Errorf(CodeDisputeNotFound, "no dispute %q about your agents", id)
		}
		if err != nil {
			return err
		}
		if d.Status != "open" {
			return Errorf(CodeDisputeClosed, "the dispute is %s already", d.Status)
		}
		now := m.now()
		d.Response, d.RespondedAt = text, &now
		return tx.UpdateDispute(ctx, d)
	})
	return d, internal("respond to dispute", err)
}

// ResolveParams are the operator's ruling.
type ResolveParams struct {
	Outcome string `json:"outcome"`
	Slash   *USDC  `json:"slash_usdc"`
	Refund  *USDC  `json:"refund_usdc"`
}

// ResolveDispute applies the operator's ruling (CONTRACT §12). Upheld on
// mainnet: slash from the listing's collateral — at most what is left, else
// refused — refund the caller from the slash, the rest to the treasury; the
// execution stays disputed. Upheld on devnet: the caller is refunded from the
// devnet treasury and the record shows the slash that would have been made.
// Rejected: the execution is completed again.
func (m *Market) ResolveDispute(ctx context.Context, id string, in ResolveParams) (Dispute, error) {
	var slash, refund USDC
	switch in.Outcome {
	case "rejected":
		if (in.Slash != nil && *in.Slash != 0) || (in.Refund != nil && *in.Refund != 0) {
			return Dispute{}, invalidField("outcome", "a rejected dispute slashes and refunds nothing")
		}
	case "upheld":
		if in.Slash != nil {
			slash = *in.Slash
		}
		if in.Refund != nil {
			refund = *in.Refund
		}
		if refund > slash {
			return Dispute{}, invalidField("refund_usdc", "the refund comes from the slash, so it is at most slash_usdc")
		}
	default:
		return Dispute{}, invalidField("outcome", "must be upheld or rejected")
	}
	var d Dispute
	err := m.store.Update(ctx, func(tx Tx) (err error) {
		d, err = tx.Dispute(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeDisputeNotFound, "no dispute %q", id)
		}
		if err != nil {
			return err
		}
		if d.Status != "open" {
			return Errorf(CodeDisputeClosed, "the dispute is %s already", d.Status)
		}
		e, err := tx.Execution(ctx, d.ExecutionID)
		if err != nil {
			return err
		}
		now := m.now()
		d.Status, d.ResolvedAt, d.Slashed, d.Refunded = in.Outcome, &now, slash, refund
		if in.Outcome == "rejected" {
			e.Status = ExecCompleted
			if err := tx.UpdateExecution(ctx, e); err != nil {
				return err
			}
		} else if err := m.slash(ctx, tx, d, e); err != nil {
			return err
		}
		if err := tx.UpdateDispute(ctx, d); err != nil {
			return err
		}
		_, err = m.post(ctx, tx, e.Environment, TxDisputeResolved, map[string]string{"dispute_id": d.ID, "execution_id": e.ID,
			"outcome": d.Status, "slashed_usdc": slash.String(), "refunded_usdc": refund.String()}, nil, escrowAccount(e))
		return err
	})
	return d, internal("resolve dispute", err)
}

func (m *Market) slash(ctx context.Context, tx Tx, d Dispute, e Execution) error {
	caller := NewAccount(e.Environment, AccountWallet, e.Wallet, e.Wallet)
	treasury := NewAccount(e.Environment, AccountTreasury, TreasuryID, "")
	data := map[string]string{"dispute_id": d.ID, "execution_id": e.ID, "agent_id": e.AgentID,
		"slashed_usdc": d.Slashed.String(), "refunded_usdc": d.Refunded.String()}
	if e.Environment == Devnet {
		// No collateral on devnet: the treasury refunds; the slash is recorded only.
		if d.Refunded == 0 {
			return nil
		}
		_, err := m.post(ctx, tx, Devnet, TxCollateralSlashed, data,
			[]Posting{{From: treasury.Address, To: caller.Address, Amount: d.Refunded}}, treasury, caller)
		return err
	}
	coll := NewAccount(Mainnet, AccountCollateral, e.AgentID, e.Creator)
	left, err := tx.Account(ctx, Mainnet, coll.Address)
	if err != nil {
		return err
	}
	if d.Slashed > left.Balance {
		return invalidField("slash_usdc", "%s USDC is more than the %s USDC of collateral left; slash at most that", d.Slashed, left.Balance)
	}
	var ps []Posting
	if d.Refunded > 0 {
		ps = append(ps, Posting{From: coll.Address, To: caller.Address, Amount: d.Refunded})
	}
	if rest := d.Slashed - d.Refunded; rest > 0 {
		ps = append(ps, Posting{From: coll.Address, To: treasury.Address, Amount: rest})
	}
	if len(ps) == 0 {
		return nil
	}
	_, err = m.post(ctx, tx, Mainnet, TxCollateralSlashed, data, ps, coll, caller, treasury, listingAccountOf(e))
	return err
}

// Disputes lists disputes by status ("" for all), for the operator.
func (m *Market) Disputes(ctx context.Context, q DisputeQuery) ([]Dispute, error) {
	out, err := Read(ctx, m.store, func(tx Tx) ([]Dispute, error) { return tx.ListDisputes(ctx, q) })
	return out, internal("list disputes", err)
}

// DisputeQuery selects disputes.
type DisputeQuery struct {
	Status  string
	Creator string
	Limit   int
}

// NewDisputeInfo is the dispute as its parties and the operator read it.
func NewDisputeInfo(d Dispute) DisputeInfo {
	i := DisputeInfo{DisputeID: d.ID, ExecutionID: d.ExecutionID, AgentID: d.AgentID, Environment: d.Environment, Status: d.Status,
		Reason: d.Reason, Description: d.Description, Evidence: d.Evidence, EvidenceHash: d.EvidenceHash, OpenedAt: d.OpenedAt,
		RespondBy: d.RespondBy, RespondedAt: d.RespondedAt, ResolvedAt: d.ResolvedAt, Slashed: d.Slashed, Refunded: d.Refunded}
	if d.Response != "" {
		i.Response = &d.Response
	}
	return i
}
