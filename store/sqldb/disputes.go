package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/crtx-market/crtx"
)

const disputeColumns = `id, execution_id, environment, wallet, agent_id, creator, reason, description, evidence,
	evidence_hash, status, opened_at, respond_by, response, responded_at, resolved_at, slashed, refunded`

// disputeSelect reads disputes (as d) with what their execution cost.
const disputeSelect = `SELECT d.id, d.execution_id, d.environment, d.wallet, d.agent_id, d.creator, d.reason, d.description,
	d.evidence, d.evidence_hash, d.status, d.opened_at, d.respond_by, d.response, d.responded_at, d.resolved_at, d.slashed,
	d.refunded, coalesce(e.cost, 0) FROM disputes d LEFT JOIN executions e ON e.id = d.execution_id`

func scanDispute(row interface{ Scan(...any) error }) (crtx.Dispute, error) {
	var d crtx.Dispute
	var evidence string
	var opened, respondBy int64
	var responded, resolved sql.NullInt64
	err := row.Scan(&d.ID, &d.ExecutionID, &d.Environment, &d.Wallet, &d.AgentID, &d.Creator, &d.Reason, &d.Description,
		&evidence, &d.EvidenceHash, &d.Status, &opened, &respondBy, &d.Response, &responded, &resolved, &d.Slashed, &d.Refunded, &d.Cost)
	d.Evidence = json.RawMessage(evidence)
	d.OpenedAt, d.RespondBy = fromUS(opened), fromUS(respondBy)
	d.RespondedAt, d.ResolvedAt = fromNullUS(responded), fromNullUS(resolved)
	return d, err
}

func (t disputeRows) InsertDispute(ctx context.Context, d crtx.Dispute) error {
	_, err := t.exec(ctx, `INSERT INTO disputes (`+disputeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.ExecutionID, d.Environment, d.Wallet, d.AgentID, d.Creator, d.Reason, d.Description, string(d.Evidence),
		d.EvidenceHash, d.Status, us(d.OpenedAt), us(d.RespondBy), d.Response, nullUS(d.RespondedAt), nullUS(d.ResolvedAt),
		d.Slashed, d.Refunded)
	return err
}

func (t disputeRows) UpdateDispute(ctx context.Context, d crtx.Dispute) error {
	r, err := t.exec(ctx, `UPDATE disputes SET status = ?, response = ?, responded_at = ?, resolved_at = ?, slashed = ?, refunded = ?
		WHERE id = ?`, d.Status, d.Response, nullUS(d.RespondedAt), nullUS(d.ResolvedAt), d.Slashed, d.Refunded, d.ID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("dispute %s: %w", d.ID, crtx.ErrNotFound)
	}
	return nil
}

func (t disputeRows) Dispute(ctx context.Context, id string) (crtx.Dispute, error) {
	d, err := scanDispute(t.queryRow(ctx, disputeSelect+` WHERE d.id = ?`, id))
	return d, notFound(err, "dispute")
}

func (t disputeRows) DisputeByExecution(ctx context.Context, executionID string) (crtx.Dispute, error) {
	d, err := scanDispute(t.queryRow(ctx, disputeSelect+` WHERE d.execution_id = ?`, executionID))
	return d, notFound(err, "dispute")
}

func (t disputeRows) ListDisputes(ctx context.Context, q crtx.DisputeQuery) ([]crtx.Dispute, error) {
	where, args := ` WHERE 1 = 1`, []any{}
	if q.Status != "" {
		where, args = where+` AND d.status = ?`, append(args, q.Status)
	}
	if q.Creator != "" {
		where, args = where+` AND d.creator = ?`, append(args, q.Creator)
	}
	if q.Wallet != "" {
		where, args = where+` AND d.wallet = ?`, append(args, q.Wallet)
	}
	order := ` ORDER BY d.opened_at, d.id`
	if q.Resolved {
		where, order = where+` AND d.status <> 'open'`, ` ORDER BY d.resolved_at DESC, d.id DESC`
	}
	if q.Wallet != "" {
		order = ` ORDER BY d.opened_at DESC, d.id DESC` // a caller's newest first
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	rows, err := t.query(ctx, disputeSelect+where+order+` LIMIT ?`, append(args, q.Limit)...)
	return collect(rows, err, scanDispute)
}
