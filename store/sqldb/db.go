package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// Dialect is what differs between SQL engines.
type Dialect interface {
	// Rebind turns ? placeholders into the engine's own.
	Rebind(query string) string
	// IsCheck, IsUnique and IsRetryable read the engine's error codes.
	IsCheck(err error) bool
	IsUnique(err error) bool
	// IsRetryable reports a transaction that may succeed if run again
	// (a serialization failure or a deadlock).
	IsRetryable(err error) bool
	// JSONField is an SQL expression for the string field key of a JSON
	// text column.
	JSONField(column, key string) string
	// Search returns, for full-text words, a join onto the listing query,
	// a condition, and the one argument of either.
	Search(words []string) (join, cond string, arg any)
	// SearchRank is an ORDER BY expression for a search, best first.
	SearchRank() string
	// IndexText updates the full-text index of an agent, where the engine
	// does not keep it by itself.
	IndexText(ctx context.Context, q Querier, a crtx.Agent) error
	// SkipLocked is appended to a SELECT that claims work rows, so
	// concurrent claimers skip each other's rows.
	SkipLocked() string
	// IndexedBy names the index a query over a table must use, where the
	// engine's planner lacks the statistics to choose it; empty where the
	// planner has them.
	IndexedBy(index string) string
	// LockAccounts orders and locks the accounts a SELECT returns, in the
	// one order every writer takes them, so that two transactions paying
	// the same accounts wait for each other rather than in a cycle; empty
	// when the engine has a single writer and needs none.
	LockAccounts() string
	// TryLock is a query answering whether a transaction-scoped lock on
	// its one argument, a name, was taken; empty when the engine has a
	// single writer and needs none.
	TryLock() string
}

// DB is a crtx.Store on one database.
type DB struct {
	// Write runs read-write transactions and Read read-only ones; they
	// may be the same pool.
	Write, Read *sql.DB
	Dialect     Dialect
	// WriteOptions and ReadOptions are the options of read-write and
	// read-only transactions; a read must see one snapshot throughout.
	// GuardedOptions are those of UpdateGuarded (WriteOptions when nil).
	WriteOptions, ReadOptions, GuardedOptions *sql.TxOptions
	// RetryBudget bounds how long Update keeps running a transaction that
	// the engine refuses as a serialization failure or deadlock; past it
	// the error wraps crtx.ErrBusy. Zero means DefaultRetryBudget.
	RetryBudget time.Duration

	group   *group
	readers *readers
	closers []func() error
}

// OnClose has Close call fn first, for what an engine runs beside the
// pools (a checkpointer, say).
func (d *DB) OnClose(fn func() error) { d.closers = append(d.closers, fn) }

// KeepReaders makes View run on n connections of the Read pool, taken for
// good, each keeping its prepared statements.
func (d *DB) KeepReaders(ctx context.Context, n int) error {
	rs, err := newReaders(ctx, d.Read, n)
	if err != nil {
		return err
	}
	d.readers = rs
	return nil
}

// GroupCommit makes Update run on one connection of the Write pool, taken
// for good, and commit concurrent transactions in groups (see group). It
// is for engines with a single writer, where transactions queue anyway.
func (d *DB) GroupCommit(ctx context.Context) error {
	g, err := newGroup(ctx, d.Write, d.Dialect)
	if err != nil {
		return err
	}
	d.group = g
	return nil
}

var _ crtx.Store = (*DB)(nil)

// WriterStats reports the group writer's counters; zeros without one.
func (d *DB) WriterStats() WriterStats {
	if d.group == nil {
		return WriterStats{}
	}
	return WriterStats{Commits: d.group.commits.Load(), Transactions: d.group.txs.Load(), Busy: time.Duration(d.group.busy.Load())}
}

// DefaultRetryBudget is how long a refused transaction is run again: long
// enough for a burst of collisions to pass, short enough that a caller
// hears 503 and retries rather than waiting on a queue.
const DefaultRetryBudget = 2 * time.Second

// Update runs fn in a read-write transaction, run again as Retry says.
func (d *DB) Update(ctx context.Context, fn func(crtx.Tx) error) error {
	if d.group != nil {
		return d.group.update(ctx, fn)
	}
	return d.retry(ctx, d.WriteOptions, fn)
}

// UpdateGuarded runs fn as Update does, at GuardedOptions.
func (d *DB) UpdateGuarded(ctx context.Context, fn func(crtx.Tx) error) error {
	if d.group != nil {
		return d.group.update(ctx, fn)
	}
	opts := d.GuardedOptions
	if opts == nil {
		opts = d.WriteOptions
	}
	return d.retry(ctx, opts, fn)
}

func (d *DB) retry(ctx context.Context, opts *sql.TxOptions, fn func(crtx.Tx) error) error {
	return d.Retry(ctx, func() error { return d.run(ctx, d.Write, opts, fn) })
}

// Retry runs fn, a transaction, again while the engine refuses it as a
// serialization failure or deadlock, with a growing, jittered pause, for
// up to the retry budget; then the error wraps crtx.ErrBusy.
func (d *DB) Retry(ctx context.Context, fn func() error) error {
	budget := d.RetryBudget
	if budget == 0 {
		budget = DefaultRetryBudget
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !d.Dialect.IsRetryable(err) || ctx.Err() != nil {
			return err
		}
		// Jitter spreads out the transactions that collided.
		pause := time.Duration(1+rand.IntN(5*(min(attempt, 10)+1))) * time.Millisecond
		if time.Since(start)+pause > budget {
			return fmt.Errorf("%w: refused %d times in %v: %w", crtx.ErrBusy, attempt+1, time.Since(start).Round(time.Millisecond), err)
		}
		time.Sleep(pause)
	}
}

// View runs fn in a read-only transaction.
func (d *DB) View(ctx context.Context, fn func(crtx.Tx) error) error {
	if d.readers != nil {
		return d.readers.view(ctx, d.Dialect, fn)
	}
	opts := d.ReadOptions
	if opts == nil {
		opts = &sql.TxOptions{ReadOnly: true}
	}
	return d.run(ctx, d.Read, opts, fn)
}

func (d *DB) run(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(crtx.Tx) error) error {
	sqlTx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn((&tx{q: sqlTx, d: d.Dialect}).roles()); err != nil {
		sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Ping checks that the database answers a query.
func (d *DB) Ping(ctx context.Context) error {
	var one int
	if err := d.Read.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Close closes the pools.
func (d *DB) Close() error {
	var gerr error
	for _, fn := range d.closers {
		gerr = errors.Join(gerr, fn())
	}
	if d.group != nil {
		gerr = errors.Join(gerr, d.group.close())
	}
	if d.readers != nil {
		d.readers.close()
	}
	if d.Read == d.Write {
		return errors.Join(gerr, d.Write.Close())
	}
	return errors.Join(gerr, d.Read.Close(), d.Write.Close())
}

// Migrate applies the migrations in dir of files, in the order of their
// leading numbers, each in its own transaction with its row in
// schema_migrations. lock, when not empty, runs first in each transaction
// (PostgreSQL takes an advisory lock, so replicas starting together do not
// apply a migration twice).
func Migrate(ctx context.Context, db *sql.DB, files fs.FS, dir, lock string) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return fmt.Errorf("migrations table: %w", err)
	}
	names, err := fs.Glob(files, dir+"/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, dir+"/")
		num, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", base)
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		if err := apply(ctx, db, version, base, string(body), lock); err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, version int, name, body, lock string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if lock != "" {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			return err
		}
	}
	var seen int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = `+strconv.Itoa(version)).Scan(&seen); err != nil {
		return err
	}
	if seen > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (`+strconv.Itoa(version)+`, '`+
		strings.ReplaceAll(name, "'", "")+`')`); err != nil {
		return err
	}
	return tx.Commit()
}
