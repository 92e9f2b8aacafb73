package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// Withdrawals: payouts to the chain, each its own leased work.

const withdrawalColumns = `id, wallet, environment, amount, destination, status, signature, raw, nonce_account, nonce,
	slot, reason, created_at, completed_at, attempts, lease_owner, lease_until`

func scanWithdrawal(row interface{ Scan(...any) error }) (crtx.Withdrawal, error) {
	var w crtx.Withdrawal
	var slot, created, until int64
	var completed sql.NullInt64
	err := row.Scan(&w.ID, &w.Wallet, &w.Environment, &w.Amount, &w.Destination, &w.Status, &w.Signature, &w.Raw,
		&w.NonceAccount, &w.Nonce, &slot, &w.Reason, &created, &completed, &w.Attempts, &w.LeaseOwner, &until)
	if len(w.Raw) == 0 {
		// Nothing signed yet reads as it was written: nil.
		w.Raw = nil
	}
	w.Slot = uint64(slot)
	w.CreatedAt, w.CompletedAt, w.LeaseUntil = fromUS(created), fromNullUS(completed), fromUS(until)
	return w, err
}

// raw is never NULL in its column: a withdrawal not signed yet has none.
func raw(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (t fundsRows) InsertWithdrawal(ctx context.Context, w crtx.Withdrawal) error {
	_, err := t.exec(ctx, `INSERT INTO withdrawals (`+withdrawalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.Wallet, w.Environment, w.Amount, w.Destination, w.Status, w.Signature, raw(w.Raw),
		w.NonceAccount, w.Nonce, int64(w.Slot), w.Reason, us(w.CreatedAt), nullUS(w.CompletedAt), w.Attempts,
		w.LeaseOwner, us(w.LeaseUntil))
	return err
}

func (t fundsRows) UpdateWithdrawal(ctx context.Context, w crtx.Withdrawal, owner string) error {
	r, err := t.exec(ctx, `UPDATE withdrawals SET status = ?, signature = ?, raw = ?, nonce_account = ?, nonce = ?, slot = ?,
		reason = ?, completed_at = ? WHERE id = ? AND lease_owner = ? AND status IN ('pending', 'sent')`,
		w.Status, w.Signature, raw(w.Raw), w.NonceAccount, w.Nonce, int64(w.Slot), w.Reason, nullUS(w.CompletedAt),
		w.ID, owner)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.Withdrawal(ctx, w.ID); err != nil {
		return err
	}
	return fmt.Errorf("withdrawal %s: %s does not hold its lease: %w", w.ID, owner, crtx.ErrConflict)
}

func (t fundsRows) Withdrawal(ctx context.Context, id string) (crtx.Withdrawal, error) {
	w, err := scanWithdrawal(t.queryRow(ctx, `SELECT `+withdrawalColumns+` FROM withdrawals WHERE id = ?`, id))
	return w, notFound(err, "withdrawal "+id)
}

func (t fundsRows) Withdrawals(ctx context.Context, wallet string, env crtx.Environment, limit, offset int) ([]crtx.Withdrawal, int, error) {
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM withdrawals WHERE wallet = ? AND environment = ?`, wallet, env).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := t.query(ctx, `SELECT `+withdrawalColumns+` FROM withdrawals WHERE wallet = ? AND environment = ?
		ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, wallet, env, limit, offset)
	out, err := collect(rows, err, scanWithdrawal)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// ClaimWithdrawals needs no row locks on SQLite, whose single writer
// serializes the claimers; PostgreSQL's skip each other's rows.
func (t fundsRows) ClaimWithdrawals(ctx context.Context, owner string, now, until time.Time, limit int) ([]crtx.Withdrawal, error) {
	// The statuses are written out so that the partial index withdrawals_work serves.
	rows, err := t.query(ctx, `SELECT `+withdrawalColumns+` FROM withdrawals
		WHERE status IN ('pending', 'sent') AND lease_until < ? ORDER BY lease_until, created_at, id LIMIT ?`+t.d.SkipLocked(),
		us(now), limit)
	out, err := collect(rows, err, scanWithdrawal)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].LeaseOwner, out[i].LeaseUntil = owner, until
		out[i].Attempts++
		if _, err := t.exec(ctx, `UPDATE withdrawals SET lease_owner = ?, lease_until = ?, attempts = ? WHERE id = ?`,
			owner, us(until), out[i].Attempts, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t fundsRows) HeldNonceAccounts(ctx context.Context, env crtx.Environment) ([]string, error) {
	// The statuses are written out so that the partial index withdrawals_nonce_held serves.
	rows, err := t.query(ctx, `SELECT nonce_account FROM withdrawals
		WHERE environment = ? AND nonce_account <> '' AND status IN ('pending', 'sent')`, env)
	return collect(rows, err, func(r interface{ Scan(...any) error }) (string, error) {
		var a string
		return a, r.Scan(&a)
	})
}

func (t fundsRows) NonceSlot(ctx context.Context, env crtx.Environment, account string) (uint64, error) {
	var slot int64
	err := t.queryRow(ctx, `SELECT coalesce(max(slot), 0) FROM withdrawals WHERE environment = ? AND nonce_account = ?`,
		env, account).Scan(&slot)
	return uint64(slot), err
}
