package sqldb

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

func (t accessRows) InsertNonce(ctx context.Context, n crtx.Nonce) error {
	// Forget long-expired challenges as new ones arrive, so the table stays small.
	if _, err := t.exec(ctx, `DELETE FROM auth_nonces WHERE expires_at < ?`, us(n.ExpiresAt.Add(-24*time.Hour))); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO auth_nonces (nonce, wallet, expires_at) VALUES (?, ?, ?)`,
		n.Nonce, n.Wallet, us(n.ExpiresAt))
	return err
}

func (t accessRows) NonceExpiry(ctx context.Context, nonce, wallet string) (time.Time, error) {
	var expires int64
	err := t.queryRow(ctx, `SELECT expires_at FROM auth_nonces WHERE nonce = ? AND wallet = ? AND used_at IS NULL`, nonce, wallet).Scan(&expires)
	return fromUS(expires), notFound(err, "nonce")
}

func (t accessRows) OpenNonce(ctx context.Context, wallet, prefix string, after time.Time) (crtx.Nonce, error) {
	n := crtx.Nonce{Wallet: wallet}
	var expires int64
	// substr, not LIKE: a prefix's underscore would match any character.
	err := t.queryRow(ctx, `SELECT nonce, expires_at FROM auth_nonces WHERE wallet = ? AND used_at IS NULL AND expires_at > ?
		AND substr(nonce, 1, ?) = ? ORDER BY expires_at DESC, nonce LIMIT 1`, wallet, us(after), len(prefix), prefix).Scan(&n.Nonce, &expires)
	n.ExpiresAt = fromUS(expires)
	return n, notFound(err, "nonce")
}

func (t accessRows) UseNonce(ctx context.Context, nonce, wallet string, now time.Time) (bool, error) {
	r, err := t.exec(ctx, `UPDATE auth_nonces SET used_at = ?
		WHERE nonce = ? AND wallet = ? AND used_at IS NULL AND expires_at > ?`, us(now), nonce, wallet, us(now))
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

func (t accessRows) InsertSession(ctx context.Context, s crtx.Session) error {
	_, err := t.exec(ctx, `INSERT INTO sessions (hash, wallet, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		s.Hash, s.Wallet, us(s.CreatedAt), us(s.ExpiresAt))
	return err
}

func (t accessRows) SessionByHash(ctx context.Context, hash string) (crtx.Session, error) {
	s := crtx.Session{Hash: hash}
	var created, expires int64
	err := t.queryRow(ctx, `SELECT wallet, created_at, expires_at FROM sessions WHERE hash = ?`, hash).
		Scan(&s.Wallet, &created, &expires)
	s.CreatedAt, s.ExpiresAt = fromUS(created), fromUS(expires)
	return s, notFound(err, "session")
}

func (t accessRows) DeleteSession(ctx context.Context, hash string) error {
	_, err := t.exec(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
	return err
}
