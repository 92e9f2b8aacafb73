package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// x402 payments: each claims its transaction's signature for one execution.

const x402Columns = `scheme, signature, environment, execution_id, payer, source, amount, network, raw, last_valid, status, reply,
	slot, created_at, settled_at`

func scanX402(row interface{ Scan(...any) error }) (crtx.Payment, error) {
	var p crtx.Payment
	var lastValid, slot, created int64
	var settled sql.NullInt64
	var reply string
	err := row.Scan(&p.Scheme, &p.Signature, &p.Environment, &p.ExecutionID, &p.Payer, &p.Source, &p.Amount, &p.Network, &p.Raw, &lastValid,
		&p.Status, &reply, &slot, &created, &settled)
	if reply != "" {
		p.Reply = []byte(reply)
	}
	p.LastValid, p.Slot = uint64(lastValid), uint64(slot)
	p.CreatedAt, p.SettledAt = fromUS(created), fromNullUS(settled)
	return p, err
}

func (t fundsRows) InsertPayment(ctx context.Context, p crtx.Payment) error {
	_, err := t.exec(ctx, `INSERT INTO x402_payments (`+x402Columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Scheme, p.Signature, p.Environment, p.ExecutionID, p.Payer, p.Source, p.Amount, p.Network, raw(p.Raw), int64(p.LastValid),
		p.Status, string(p.Reply), int64(p.Slot), us(p.CreatedAt), nullUS(p.SettledAt))
	return err
}

func (t fundsRows) UpdatePayment(ctx context.Context, p crtx.Payment, from crtx.PaymentStatus) error {
	if !crtx.PaymentMove(from, p.Status) {
		return fmt.Errorf("payment %s: no move from %s to %s", p.Signature, from, p.Status)
	}
	r, err := t.exec(ctx, `UPDATE x402_payments SET status = ?, reply = ?, slot = ?, settled_at = ? WHERE signature = ? AND status = ?`,
		p.Status, string(p.Reply), int64(p.Slot), nullUS(p.SettledAt), p.Signature, from)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.Payment(ctx, p.Signature); err != nil {
		return err
	}
	return fmt.Errorf("payment %s is no longer %s: %w", p.Signature, from, crtx.ErrConflict)
}

func (t fundsRows) Payment(ctx context.Context, signature string) (crtx.Payment, error) {
	p, err := scanX402(t.queryRow(ctx, `SELECT `+x402Columns+` FROM x402_payments WHERE signature = ?`, signature))
	return p, notFound(err, "payment "+signature)
}

func (t fundsRows) PaymentOf(ctx context.Context, executionID string) (crtx.Payment, error) {
	p, err := scanX402(t.queryRow(ctx, `SELECT `+x402Columns+` FROM x402_payments WHERE execution_id = ?`, executionID))
	return p, notFound(err, "payment of "+executionID)
}

func (t fundsRows) PaidOutcomes(ctx context.Context, agentID string, since time.Time) (ended, failed int, err error) {
	// A range of executions_agent (agent_id, initiated_at), each joined to
	// its payment by x402_payments' execution_id.
	err = t.queryRow(ctx, `SELECT count(*), CAST(coalesce(sum(CASE WHEN e.status = 'failed' THEN 1 ELSE 0 END), 0) AS BIGINT)
		FROM executions e JOIN x402_payments p ON p.execution_id = e.id
		WHERE e.agent_id = ? AND e.initiated_at >= ? AND e.key_id = ? AND e.status IN ('completed', 'disputed', 'failed')
		AND p.status = 'settled'`, agentID, us(since), crtx.X402Key).Scan(&ended, &failed)
	return ended, failed, err
}

func (t fundsRows) PaymentsInFlight(ctx context.Context, source string) (crtx.USDC, error) {
	var sum crtx.USDC
	err := t.queryRow(ctx, `SELECT COALESCE(SUM(amount), 0) FROM x402_payments WHERE source = ? AND status IN ('verified', 'sent')`, source).Scan(&sum)
	return sum, err
}
