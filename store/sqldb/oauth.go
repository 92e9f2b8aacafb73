package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

func (t accessRows) InsertOAuthClient(ctx context.Context, c crtx.OAuthClient, forgetBefore time.Time) error {
	if _, err := t.exec(ctx, `DELETE FROM oauth_clients WHERE used_at IS NULL AND created_at < ?`, us(forgetBefore)); err != nil {
		return err
	}
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, created_at, used_at) VALUES (?, ?, ?, ?, ?)`,
		c.ID, c.Name, string(uris), us(c.CreatedAt), nullUS(c.UsedAt))
	return err
}

func (t accessRows) OAuthClient(ctx context.Context, id string) (crtx.OAuthClient, error) {
	c := crtx.OAuthClient{ID: id}
	var uris string
	var created int64
	var used sql.NullInt64
	err := t.queryRow(ctx, `SELECT name, redirect_uris, created_at, used_at FROM oauth_clients WHERE id = ?`, id).
		Scan(&c.Name, &uris, &created, &used)
	if err != nil {
		return c, notFound(err, "oauth client")
	}
	c.CreatedAt, c.UsedAt = fromUS(created), fromNullUS(used)
	return c, json.Unmarshal([]byte(uris), &c.RedirectURIs)
}

func (t accessRows) UseOAuthClient(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE oauth_clients SET used_at = ? WHERE id = ? AND used_at IS NULL`, us(at), id)
	return err
}

func (t accessRows) InsertOAuthCode(ctx context.Context, c crtx.OAuthCode, now time.Time) error {
	if _, err := t.exec(ctx, `DELETE FROM oauth_codes WHERE expires_at <= ?`, us(now)); err != nil {
		return err
	}
	var limit sql.NullInt64
	if c.SpendLimit != nil {
		limit = sql.NullInt64{Int64: int64(*c.SpendLimit), Valid: true}
	}
	_, err := t.exec(ctx, `INSERT INTO oauth_codes (hash, client_id, client_name, redirect_uri, challenge, wallet, environment, spend_limit, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.Hash, c.ClientID, c.ClientName, c.RedirectURI, c.Challenge, c.Wallet, c.Environment, limit, us(c.ExpiresAt))
	return err
}

func (t accessRows) OAuthCode(ctx context.Context, hash string, now time.Time) (crtx.OAuthCode, error) {
	c := crtx.OAuthCode{Hash: hash}
	var limit sql.NullInt64
	var spent sql.NullString
	var spentAt sql.NullInt64
	var expires int64
	err := t.queryRow(ctx, `SELECT client_id, client_name, redirect_uri, challenge, wallet, environment, spend_limit, expires_at, spent_key, spent_at
		FROM oauth_codes WHERE hash = ? AND expires_at > ?`, hash, us(now)).
		Scan(&c.ClientID, &c.ClientName, &c.RedirectURI, &c.Challenge, &c.Wallet, &c.Environment, &limit, &expires, &spent, &spentAt)
	if err != nil {
		return c, notFound(err, "oauth code")
	}
	c.ExpiresAt = fromUS(expires)
	if limit.Valid {
		l := crtx.USDC(limit.Int64)
		c.SpendLimit = &l
	}
	if spent.Valid {
		c.Spent = &spent.String
	}
	c.SpentAt = fromNullUS(spentAt)
	return c, nil
}

func (t accessRows) SpendOAuthCode(ctx context.Context, hash, key string, at time.Time) error {
	r, err := t.exec(ctx, `UPDATE oauth_codes SET spent_key = ?, spent_at = ? WHERE hash = ? AND spent_key IS NULL`, key, us(at), hash)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("oauth code: %w", crtx.ErrConflict)
	}
	return nil
}
