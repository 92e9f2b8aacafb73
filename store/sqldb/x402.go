package sqldb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/crtx-market/crtx"
)

// x402 payments: each claims its transaction's signature for one execution.

const x402Columns = `signature, environment, execution_id, payer, amount, network, raw, last_valid, status, reply,
	slot, created_at, settled_at`

func scanX402(row interface{ Scan(...any) error }) (crtx.Payment, error) {
	var p crtx.Payment
	var lastValid, slot, created int64
	var settled sql.NullInt64
	var reply string
	err := row.Scan(&p.Signature, &p.Environment, &p.ExecutionID, &p.Payer, &p.Amount, &p.Network, &p.Raw, &lastValid,
		&p.Status, &reply, &slot, &created, &settled)
	if reply != "" {
		p.Reply = []byte(reply)
	}
	p.LastValid, p.Slot = uint64(lastValid), uint64(slot)
	p.CreatedAt, p.SettledAt = fromUS(created), fromNullUS(settled)
	return p, err
}

func (t *tx) InsertPayment(ctx context.Context, p crtx.Payment) error {
	_, err := t.exec(ctx, `INSERT INTO x402_payments (`+x402Columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Signature, p.Environment, p.ExecutionID, p.Payer, p.Amount, p.Network, raw(p.Raw), int64(p.LastValid),
		p.Status, string(p.Reply), int64(p.Slot), us(p.CreatedAt), nullUS(p.SettledAt))
	return err
}

func (t *tx) UpdatePayment(ctx context.Context, p crtx.Payment) error {
	r, err := t.exec(ctx, `UPDATE x402_payments SET status = ?, reply = ?, slot = ?, settled_at = ?
		WHERE signature = ? AND status IN ('verified', 'sent')`,
		p.Status, string(p.Reply), int64(p.Slot), nullUS(p.SettledAt), p.Signature)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.Payment(ctx, p.Signature); err != nil {
		return err
	}
	return fmt.Errorf("payment %s is final already: %w", p.Signature, crtx.ErrConflict)
}

func (t *tx) Payment(ctx context.Context, signature string) (crtx.Payment, error) {
	p, err := scanX402(t.queryRow(ctx, `SELECT `+x402Columns+` FROM x402_payments WHERE signature = ?`, signature))
	return p, notFound(err, "payment "+signature)
}

func (t *tx) PaymentOf(ctx context.Context, executionID string) (crtx.Payment, error) {
	p, err := scanX402(t.queryRow(ctx, `SELECT `+x402Columns+` FROM x402_payments WHERE execution_id = ?`, executionID))
	return p, notFound(err, "payment of "+executionID)
}
