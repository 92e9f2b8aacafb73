package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

func scanKey(row interface{ Scan(...any) error }) (crtx.APIKey, error) {
	var k crtx.APIKey
	var created int64
	var lastUsed, revoked, limit, expires sql.NullInt64
	var client, refresh sql.NullString
	err := row.Scan(&k.ID, &k.Hash, &k.Wallet, &k.Name, &k.Environment, &k.Prefix, &created, &lastUsed,
		&k.ExecutionCount, &k.TotalSpent, &limit, &revoked, &client, &expires, &refresh)
	k.CreatedAt = fromUS(created)
	k.LastUsedAt, k.RevokedAt, k.ExpiresAt = fromNullUS(lastUsed), fromNullUS(revoked), fromNullUS(expires)
	k.Client, k.RefreshHash = client.String, refresh.String
	if limit.Valid {
		l := crtx.USDC(limit.Int64)
		k.SpendLimit = &l
	}
	return k, err
}

func (t accessRows) InsertKey(ctx context.Context, k crtx.APIKey) error {
	var limit sql.NullInt64
	if k.SpendLimit != nil {
		limit = sql.NullInt64{Int64: int64(*k.SpendLimit), Valid: true}
	}
	_, err := t.exec(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.Wallet, k.Name, k.Environment, k.Prefix, us(k.CreatedAt), nullUS(k.LastUsedAt),
		k.ExecutionCount, k.TotalSpent, limit, nullUS(k.RevokedAt), nullString(k.Client), nullUS(k.ExpiresAt), nullString(k.RefreshHash))
	return err
}

// nullString stores "" as NULL, so that the unique refresh_hash holds
// only the keys that have one.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func (t accessRows) KeyByRefreshHash(ctx context.Context, hash string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE refresh_hash = ?`, hash))
	return k, notFound(err, "api key")
}

func (t accessRows) RefreshKey(ctx context.Context, k crtx.APIKey, from string, at, forgetBefore time.Time) error {
	r, err := t.exec(ctx, `UPDATE api_keys SET hash = ?, prefix = ?, expires_at = ?, refresh_hash = ?
		WHERE id = ? AND refresh_hash = ? AND revoked_at IS NULL`, k.Hash, k.Prefix, nullUS(k.ExpiresAt), nullString(k.RefreshHash), k.ID, from)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("refresh key %s: %w", k.ID, crtx.ErrConflict)
	}
	if _, err := t.exec(ctx, `DELETE FROM oauth_spent_refresh WHERE spent_at < ?`, us(forgetBefore)); err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO oauth_spent_refresh (hash, key_id, spent_at) VALUES (?, ?, ?)`, from, k.ID, us(at))
	return err
}

func (t accessRows) SpentRefresh(ctx context.Context, hash string) (string, time.Time, error) {
	var key string
	var at int64
	err := t.queryRow(ctx, `SELECT key_id, spent_at FROM oauth_spent_refresh WHERE hash = ?`, hash).Scan(&key, &at)
	return key, fromUS(at), notFound(err, "spent refresh token")
}

func (t accessRows) KeyByHash(ctx context.Context, hash string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
	return k, notFound(err, "api key")
}

func (t accessRows) KeyByID(ctx context.Context, id string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	return k, notFound(err, "api key")
}

func (t accessRows) KeysByWallet(ctx context.Context, wallet string) ([]crtx.APIKey, error) {
	rows, err := t.query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE wallet = ? ORDER BY created_at, id`, wallet)
	return collect(rows, err, scanKey)
}

func (t accessRows) RevokeKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, us(at), id)
	return err
}

func (t accessRows) TouchKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, us(at), id)
	return err
}

func (t accessRows) RefundKeyUsage(ctx context.Context, keyID string, amount crtx.USDC) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET total_spent = CASE WHEN total_spent > ? THEN total_spent - ? ELSE 0 END WHERE id = ?`,
		amount, amount, keyID)
	return err
}

func (t accessRows) AddKeyUsage(ctx context.Context, keyID string, cost crtx.USDC) error {
	// Conditions, not the CHECK constraint (which stays as the guard), so
	// that a refusal fails no statement: PostgreSQL would abort the
	// transaction, and the caller still reads the key to explain it.
	r, err := t.exec(ctx, `UPDATE api_keys SET execution_count = execution_count + 1, total_spent = total_spent + ?
		WHERE id = ? AND revoked_at IS NULL AND (spend_limit IS NULL OR total_spent + ? <= spend_limit)`, cost, keyID, cost)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	var revoked bool
	err = t.queryRow(ctx, `SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = ?`, keyID).Scan(&revoked)
	if err != nil {
		return notFound(err, "api key "+keyID)
	}
	if revoked {
		return fmt.Errorf("key %s is revoked: %w", keyID, crtx.ErrNotFound)
	}
	return fmt.Errorf("key %s: %w", keyID, crtx.ErrSpendLimit)
}
