// Package sqldb implements crtx.Store over database/sql for every engine:
// the SQL is shared, and a Dialect holds what differs (placeholders,
// full-text search, row locks, error codes). store/sqlite and
// store/postgres open their databases and hand them to it.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

type tx struct {
	q Querier
	d Dialect
	// stmts, when set, keeps prepared statements of the connection q runs
	// on (the group writer's); without it the driver prepares each time.
	stmts *stmtCache
	// detached statements ignore the caller's cancellation: in a group
	// commit an interrupted statement would roll back the other callers'
	// work with it.
	detached bool
}

// Querier runs statements: a *sql.Tx, or a *sql.Conn inside a transaction.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// on returns what runs q: a prepared statement when the transaction keeps
// them, else the transaction itself.
func (t *tx) on(ctx context.Context, q string) (context.Context, Querier, string) {
	if t.detached {
		ctx = context.WithoutCancel(ctx)
	}
	q = t.d.Rebind(q)
	if s := t.stmts.get(ctx, q); s != nil {
		return ctx, stmtQuerier{s}, ""
	}
	return ctx, t.q, q
}

func us(t time.Time) int64 { return t.UnixMicro() }

func fromUS(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullUS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromUS(v.Int64)
	return &t
}

func nullUS(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: us(*t), Valid: true}
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, crtx.ErrNotFound)
	}
	return err
}

func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx, on, q := t.on(ctx, q)
	r, err := on.ExecContext(ctx, q, args...)
	if err != nil && t.d.IsUnique(err) {
		return r, fmt.Errorf("%w: %v", crtx.ErrConflict, err)
	}
	return r, err
}

func (t *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx, on, q := t.on(ctx, q)
	return on.QueryContext(ctx, q, args...)
}

func (t *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	ctx, on, q := t.on(ctx, q)
	return on.QueryRowContext(ctx, q, args...)
}

// inList returns "(?, …)" for args, padded to a power of two by repeating
// the last one, which an IN list ignores: a few statement shapes, each
// prepared once, serve every length.
func inList(args []any) (string, []any) {
	if len(args) == 0 {
		return `(NULL)`, args
	}
	n := 1
	for n < len(args) {
		n *= 2
	}
	for len(args) < n {
		args = append(args, args[len(args)-1])
	}
	return placeholders(1, n), args
}

// placeholders returns n rows of m placeholders each, "(?, ?), (?, ?)".
func placeholders(n, m int) string {
	row := `(?` + strings.Repeat(`, ?`, m-1) + `)`
	return row + strings.Repeat(`, `+row, n-1)
}

// querier lets a Dialect run statements the way the transaction does.
type querier struct{ t *tx }

func (q querier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.t.exec(ctx, query, args...)
}

func (q querier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.t.query(ctx, query, args...)
}

func (q querier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.t.queryRow(ctx, query, args...)
}

func (t *tx) TryLock(ctx context.Context, name string) (bool, error) {
	q := t.d.TryLock()
	if q == "" {
		return true, nil
	}
	var ok bool
	err := t.queryRow(ctx, q, name).Scan(&ok)
	return ok, err
}

func (t *tx) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := t.queryRow(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	return v, notFound(err, "meta "+key)
}

func (t *tx) SetMeta(ctx context.Context, key, value string) error {
	_, err := t.exec(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func (t *tx) InsertNonce(ctx context.Context, n crtx.Nonce) error {
	// Forget long-expired challenges as new ones arrive, so the table stays small.
	if _, err := t.exec(ctx, `DELETE FROM auth_nonces WHERE expires_at < ?`, us(n.ExpiresAt.Add(-24*time.Hour))); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO auth_nonces (nonce, wallet, expires_at) VALUES (?, ?, ?)`,
		n.Nonce, n.Wallet, us(n.ExpiresAt))
	return err
}

func (t *tx) UseNonce(ctx context.Context, nonce, wallet string, now time.Time) (bool, error) {
	r, err := t.exec(ctx, `UPDATE auth_nonces SET used_at = ?
		WHERE nonce = ? AND wallet = ? AND used_at IS NULL AND expires_at > ?`, us(now), nonce, wallet, us(now))
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

func (t *tx) InsertSession(ctx context.Context, s crtx.Session) error {
	_, err := t.exec(ctx, `INSERT INTO sessions (hash, wallet, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		s.Hash, s.Wallet, us(s.CreatedAt), us(s.ExpiresAt))
	return err
}

func (t *tx) SessionByHash(ctx context.Context, hash string) (crtx.Session, error) {
	s := crtx.Session{Hash: hash}
	var created, expires int64
	err := t.queryRow(ctx, `SELECT wallet, created_at, expires_at FROM sessions WHERE hash = ?`, hash).
		Scan(&s.Wallet, &created, &expires)
	s.CreatedAt, s.ExpiresAt = fromUS(created), fromUS(expires)
	return s, notFound(err, "session")
}

func (t *tx) DeleteSession(ctx context.Context, hash string) error {
	_, err := t.exec(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
	return err
}

const keyColumns = `id, hash, wallet, name, environment, prefix, created_at, last_used_at,
	execution_count, total_spent, spend_limit, revoked_at`

func scanKey(row interface{ Scan(...any) error }) (crtx.APIKey, error) {
	var k crtx.APIKey
	var created int64
	var lastUsed, revoked, limit sql.NullInt64
	err := row.Scan(&k.ID, &k.Hash, &k.Wallet, &k.Name, &k.Environment, &k.Prefix, &created, &lastUsed,
		&k.ExecutionCount, &k.TotalSpent, &limit, &revoked)
	k.CreatedAt = fromUS(created)
	k.LastUsedAt, k.RevokedAt = fromNullUS(lastUsed), fromNullUS(revoked)
	if limit.Valid {
		l := crtx.USDC(limit.Int64)
		k.SpendLimit = &l
	}
	return k, err
}

func (t *tx) InsertKey(ctx context.Context, k crtx.APIKey) error {
	var limit sql.NullInt64
	if k.SpendLimit != nil {
		limit = sql.NullInt64{Int64: int64(*k.SpendLimit), Valid: true}
	}
	_, err := t.exec(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.Wallet, k.Name, k.Environment, k.Prefix, us(k.CreatedAt), nullUS(k.LastUsedAt),
		k.ExecutionCount, k.TotalSpent, limit, nullUS(k.RevokedAt))
	return err
}

func (t *tx) KeyByHash(ctx context.Context, hash string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
	return k, notFound(err, "api key")
}

func (t *tx) KeyByID(ctx context.Context, id string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	return k, notFound(err, "api key")
}

func (t *tx) KeysByWallet(ctx context.Context, wallet string) ([]crtx.APIKey, error) {
	rows, err := t.query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE wallet = ? ORDER BY created_at, id`, wallet)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := []crtx.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

func (t *tx) RevokeKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, us(at), id)
	return err
}

func (t *tx) TouchKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, us(at), id)
	return err
}
