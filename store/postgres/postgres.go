// Package postgres is the store engine for operators who run several crtxd
// replicas on one PostgreSQL database (pgx). Read-write transactions run
// SERIALIZABLE and are retried on serialization failures and deadlocks, so
// every replica sees what a single writer would; the transactions on every
// execution's path (UpdateGuarded) run READ COMMITTED, holding their rules
// by guarded writes, so that executions sharing a row wait for each other
// instead of failing. Work rows are claimed with FOR UPDATE SKIP LOCKED.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock keeps replicas that start together from applying a
// migration twice.
const migrationLock = `SELECT pg_advisory_xact_lock(7347420001)`

// DefaultConns is how many connections a store keeps open. An execution's
// transactions are single statements that hold no lock between round
// trips, so a few connections keep a database's cores busy; more only
// queue inside PostgreSQL, contending for the same pages (measured on 2
// cores: 24 connections made 451 executions a second, 8 made 562–653,
// docs/performance.md).
const DefaultConns = 8

// Migrated reports whether the database at dsn holds a crtx store (its
// migrations table), without migrating it: offline commands must not
// create a store where an operator named the wrong database.
func Migrated(ctx context.Context, dsn string) (bool, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false, fmt.Errorf("postgres: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	var table sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations')::text`).Scan(&table); err != nil {
		return false, fmt.Errorf("postgres: %w", err)
	}
	return table.Valid, nil
}

// Open connects to the database at dsn (postgres://…) and applies every
// migration it has not seen. searchPath, when not empty, selects the
// schema (tests give each run a schema of its own).
func Open(ctx context.Context, dsn, searchPath string) (*DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if searchPath != "" {
		cfg.RuntimeParams["search_path"] = searchPath
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(DefaultConns)
	db.SetMaxIdleConns(DefaultConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := sqldb.Migrate(ctx, db, migrations, "migrations", migrationLock); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &sqldb.DB{Write: db, Read: db, Dialect: dialect{},
		WriteOptions:   &sql.TxOptions{Isolation: sql.LevelSerializable},
		GuardedOptions: &sql.TxOptions{Isolation: sql.LevelReadCommitted},
		ReadOptions:    &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}}
	return &DB{DB: s, conn: cfg,
		opens:  newBatcher(s, `SELECT * FROM crtx_execution_batch(false, $1::jsonb)`),
		closes: newBatcher(s, `SELECT * FROM crtx_execution_batch(true, $1::jsonb)`)}, nil
}

// DB is the PostgreSQL store: the SQL engine, with an execution's first
// and last transactions each sent as one statement, a function call in
// autocommit (migration 0009), instead of a dozen round trips inside
// BEGIN and COMMIT during which the wallet's row stays locked; and the
// calls that arrive together sent as one such statement (migration 0017).
type DB struct {
	*sqldb.DB
	conn          *pgx.ConnConfig // for Listen's connection of its own
	opens, closes *batcher
}

// Close stops the batches, after those running, and closes the store.
func (d *DB) Close() error {
	d.opens.close()
	d.closes.close()
	return d.DB.Close()
}

// SetConns sets how many connections the store keeps open.
func (d *DB) SetConns(n int) {
	d.Write.SetMaxOpenConns(n)
	d.Write.SetMaxIdleConns(n)
}

type dialect struct{}

// Rebind numbers the ? placeholders ($1, $2, …), leaving quoted text alone.
func (dialect) Rebind(q string) string {
	var b strings.Builder
	n, quoted := 0, false
	for _, r := range q {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == '?' && !quoted:
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func (dialect) IsCheck(err error) bool  { return code(err) == "23514" }
func (dialect) IsUnique(err error) bool { return code(err) == "23505" }

// IsRetryable: serialization_failure and deadlock_detected.
func (dialect) IsRetryable(err error) bool {
	c := code(err)
	return c == "40001" || c == "40P01"
}

func (dialect) JSONField(column, key string) string {
	return "(" + column + "::jsonb ->> '" + strings.ReplaceAll(key, "'", "") + "')"
}

// Search matches every word as a prefix, stemmed as English.
func (dialect) Search(words []string) (string, string, any) {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = w + ":*"
	}
	return ` CROSS JOIN to_tsquery('english', ?) AS query`, `a.search @@ query`, strings.Join(q, " & ")
}

func (dialect) SearchRank() string {
	return `ts_rank(a.search, query) * ` + sqldb.Reliability + ` DESC`
}

// IndexText does nothing: the search column is generated.
func (dialect) IndexText(context.Context, sqldb.Querier, crtx.Agent) error { return nil }

// IndexedBy: PostgreSQL's planner keeps statistics and picks the index.
func (dialect) IndexedBy(string) string { return "" }

func (dialect) SkipLocked() string { return " FOR UPDATE SKIP LOCKED" }

// LockAccounts takes wallets first, as the execution batches do (migration
// 0017 locks their wallets before anything else), then the other
// accounts, each by bytes, whatever the database's collation, as Go sorts
// the batches' items (openingOrder).
func (dialect) LockAccounts() string {
	return ` ORDER BY environment, kind <> 'wallet', address COLLATE "C" FOR NO KEY UPDATE`
}

// TryLock takes a transaction-scoped advisory lock; it is released at
// commit, or when the holder's connection dies.
func (dialect) TryLock() string { return `SELECT pg_try_advisory_xact_lock(hashtext(?))` }
