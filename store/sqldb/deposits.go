package sqldb

import (
	"context"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// Deposits: Solana Pay requests and the transfers credited to them.

const depositColumns = `id, wallet, environment, amount, reference, memo, status, credited, created_at, expires_at, checked_at, scanned_until`

func scanDeposit(row interface{ Scan(...any) error }) (crtx.Deposit, error) {
	var d crtx.Deposit
	var created, expires, checked int64
	err := row.Scan(&d.ID, &d.Wallet, &d.Environment, &d.Amount, &d.Reference, &d.Memo, &d.Status, &d.Credited,
		&created, &expires, &checked, &d.ScannedUntil)
	d.CreatedAt, d.ExpiresAt, d.CheckedAt = fromUS(created), fromUS(expires), fromUS(checked)
	return d, err
}

func (t fundsRows) InsertDeposit(ctx context.Context, d crtx.Deposit) error {
	_, err := t.exec(ctx, `INSERT INTO deposits (`+depositColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Wallet, d.Environment, d.Amount, d.Reference, d.Memo, d.Status, d.Credited,
		us(d.CreatedAt), us(d.ExpiresAt), us(d.CheckedAt), d.ScannedUntil)
	return err
}

func (t fundsRows) Deposit(ctx context.Context, id string) (crtx.Deposit, error) {
	d, err := scanDeposit(t.queryRow(ctx, `SELECT `+depositColumns+` FROM deposits WHERE id = ?`, id))
	return d, notFound(err, "deposit "+id)
}

func (t fundsRows) DepositByReference(ctx context.Context, reference string) (crtx.Deposit, error) {
	d, err := scanDeposit(t.queryRow(ctx, `SELECT `+depositColumns+` FROM deposits WHERE reference = ?`, reference))
	return d, notFound(err, "deposit of reference "+reference)
}

func (t fundsRows) Deposits(ctx context.Context, wallet string, env crtx.Environment, limit, offset int) ([]crtx.Deposit, int, error) {
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM deposits WHERE wallet = ? AND environment = ?`, wallet, env).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := t.query(ctx, `SELECT `+depositColumns+` FROM deposits WHERE wallet = ? AND environment = ?
		ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, wallet, env, limit, offset)
	out, err := collect(rows, err, scanDeposit)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

func (t fundsRows) WatchedDeposits(ctx context.Context, env crtx.Environment, since time.Time, limit, perWallet int) ([]crtx.Deposit, error) {
	rows, err := t.query(ctx, `SELECT `+depositColumns+` FROM (
			SELECT *, row_number() OVER (PARTITION BY wallet ORDER BY checked_at, created_at, id) AS nth
			FROM deposits WHERE environment = ? AND created_at >= ?) AS d
		WHERE nth <= ? ORDER BY checked_at, created_at, id LIMIT ?`, env, us(since), perWallet, limit)
	return collect(rows, err, scanDeposit)
}

func (t fundsRows) CheckedDeposit(ctx context.Context, id string, at time.Time, until string) error {
	r, err := t.exec(ctx, `UPDATE deposits SET checked_at = ?, scanned_until = ? WHERE id = ?`, us(at), until, id)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("deposit %s: %w", id, crtx.ErrNotFound)
	}
	return nil
}

func (t fundsRows) DepositCounts(ctx context.Context, wallet string, env crtx.Environment, now, since time.Time) (open, recent int, err error) {
	err = t.queryRow(ctx, `SELECT
			coalesce(sum(CASE WHEN status = 'awaiting_payment' AND expires_at > ? THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN created_at > ? THEN 1 ELSE 0 END), 0)
		FROM deposits WHERE wallet = ? AND environment = ? AND created_at > ?`,
		us(now), us(since), wallet, env, us(now.Add(-crtx.DepositTTL))).Scan(&open, &recent)
	return open, recent, err
}

func (t fundsRows) CreditDeposit(ctx context.Context, p crtx.DepositPayment) error {
	// The payment is written first and alone decides: a part claimed
	// already (or the whole of its transaction, when it is a part, or a
	// part, when it is the whole), or a deposit that is not there, writes
	// nothing, so a caller that goes on in the same transaction keeps no
	// half of a credit.
	r, err := t.exec(ctx, `INSERT INTO deposit_payments (`+paymentColumns+`)
		SELECT CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM deposits WHERE id = ? AND environment = ?)
		AND NOT EXISTS (SELECT 1 FROM deposit_payments WHERE signature = ? AND (part = ? OR part = 0 OR ? = 0))
		ON CONFLICT (signature, part) DO NOTHING`,
		p.Signature, p.Part, p.DepositID, p.Environment, p.Amount, int64(p.Slot), p.TxID, us(p.CreditedAt), p.DepositID, p.Environment,
		p.Signature, p.Part, p.Part)
	if err != nil {
		return fmt.Errorf("payment %s/%d: %w", p.Signature, p.Part, err)
	}
	if n, _ := r.RowsAffected(); n != 1 {
		var claimed int
		if err := t.queryRow(ctx, `SELECT count(*) FROM deposit_payments WHERE signature = ? AND (part = ? OR part = 0 OR ? = 0)`,
			p.Signature, p.Part, p.Part).Scan(&claimed); err != nil {
			return err
		}
		if claimed > 0 {
			return fmt.Errorf("payment %s/%d: credited already: %w", p.Signature, p.Part, crtx.ErrConflict)
		}
		return fmt.Errorf("deposit %s of %s: %w", p.DepositID, p.Environment, crtx.ErrNotFound)
	}
	// Values on the right of SET are the row's before the update.
	_, err = t.exec(ctx, `UPDATE deposits SET credited = credited + ?,
		status = CASE WHEN credited + ? >= amount THEN 'credited' ELSE status END WHERE id = ?`,
		p.Amount, p.Amount, p.DepositID)
	return err
}

const paymentColumns = `signature, part, deposit_id, environment, amount, slot, tx_id, credited_at`

func scanPayment(row interface{ Scan(...any) error }) (crtx.DepositPayment, error) {
	var p crtx.DepositPayment
	var slot, credited int64
	err := row.Scan(&p.Signature, &p.Part, &p.DepositID, &p.Environment, &p.Amount, &slot, &p.TxID, &credited)
	p.Slot, p.CreditedAt = uint64(slot), fromUS(credited)
	return p, err
}

func (t fundsRows) DepositPayments(ctx context.Context, depositID string) ([]crtx.DepositPayment, error) {
	rows, err := t.query(ctx, `SELECT `+paymentColumns+` FROM deposit_payments WHERE deposit_id = ?
		ORDER BY credited_at, signature, part`, depositID)
	return collect(rows, err, scanPayment)
}

func (t fundsRows) DepositPayment(ctx context.Context, signature string, part int) (crtx.DepositPayment, error) {
	// The whole of a transaction answers for any of its parts.
	p, err := scanPayment(t.queryRow(ctx, `SELECT `+paymentColumns+` FROM deposit_payments
		WHERE signature = ? AND (part = ? OR part = 0 OR ? = 0) ORDER BY part LIMIT 1`, signature, part, part))
	return p, notFound(err, "payment "+signature)
}
