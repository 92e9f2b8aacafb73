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

func (t systemRows) TryLock(ctx context.Context, name string) (bool, error) {
	q := t.d.TryLock()
	if q == "" {
		return true, nil
	}
	var ok bool
	err := t.queryRow(ctx, q, name).Scan(&ok)
	return ok, err
}

func (t systemRows) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := t.queryRow(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	return v, notFound(err, "meta "+key)
}

func (t systemRows) SetMeta(ctx context.Context, key, value string) error {
	_, err := t.exec(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

const keyColumns = `id, hash, wallet, name, environment, prefix, created_at, last_used_at,
	execution_count, total_spent, spend_limit, revoked_at, oauth_client, expires_at, refresh_hash`

// collect scans every row of a query with scan and closes the rows, so a
// statement may follow on the same connection. None is an empty list, not
// nil: lists are written as [] in JSON.
// collectMap reads rows of two columns, a key and its value, into a map.
func collectMap[K comparable, V any](rows *sql.Rows, err error) (map[K]V, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[K]V{}
	for rows.Next() {
		var k K
		var v V
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

func collect[T any](rows *sql.Rows, err error, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// roles is t as each role a service asks of a transaction.
func (t *tx) roles() crtx.Tx {
	return crtx.Tx{System: systemRows{t}, Access: accessRows{t}, Ledger: ledgerRows{t}, Catalog: catalogRows{t},
		Executions: executionRows{t}, Disputes: disputeRows{t}, Funds: fundsRows{t}, Deliveries: deliveryRows{t}}
}

// The roles of a transaction, each the methods of one crtx role interface
// over the same connection.
type (
	systemRows    struct{ *tx }
	accessRows    struct{ *tx }
	ledgerRows    struct{ *tx }
	catalogRows   struct{ *tx }
	executionRows struct{ *tx }
	disputeRows   struct{ *tx }
	fundsRows     struct{ *tx }
	deliveryRows  struct{ *tx }
)
