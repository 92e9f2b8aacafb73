// Package sqlite is the embedded store engine: one SQLite file in WAL mode,
// with a single writer connection (SQLite allows one writer at a time, so
// queueing in Go beats retrying on SQLITE_BUSY) and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a crtx.Store on one SQLite file.
type Store struct {
	write *sql.DB
	read  *sql.DB
}

var _ crtx.Store = (*Store)(nil)

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// BEGIN IMMEDIATE takes the write lock up front, so a transaction
		// never fails half-way on a lock upgrade.
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and applies every
// migration it has not seen.
func Open(ctx context.Context, path string) (*Store, error) {
	// Create the file private first: SQLite gives its -wal and -shm files
	// the database file's permissions.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
	} else {
		f.Close()
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	s := &Store{write: w}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	s.read = r
	return s, nil
}

// migrate applies the embedded migrations in order, each in its own
// transaction together with its row in schema_migrations.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return fmt.Errorf("sqlite: migrations table: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: name must start with a number", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := s.write.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", base, err)
		}
		var seen int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&seen); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %s: %w", base, err)
		}
		if seen > 0 {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, version, base); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %s: %w", base, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", base, err)
		}
	}
	return nil
}

// Update runs fn in a write transaction on the single writer connection.
func (s *Store) Update(ctx context.Context, fn func(crtx.Tx) error) error {
	return s.run(ctx, s.write, false, fn)
}

// View runs fn in a read transaction on the reader pool.
func (s *Store) View(ctx context.Context, fn func(crtx.Tx) error) error {
	db := s.read
	if db == nil { // during migration
		db = s.write
	}
	return s.run(ctx, db, true, fn)
}

func (s *Store) run(ctx context.Context, db *sql.DB, readOnly bool, fn func(crtx.Tx) error) (err error) {
	sqlTx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: readOnly})
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn(&tx{tx: sqlTx}); err != nil {
		sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// Ping checks that both pools answer a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.read.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close closes both pools.
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

// hasCode reports whether err is a SQLite error with the extended code.
func hasCode(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == code
}

func isCheck(err error) bool { return hasCode(err, sqlite3.SQLITE_CONSTRAINT_CHECK) }

// mapErr turns unique violations into crtx.ErrConflict.
func mapErr(err error) error {
	if hasCode(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE) || hasCode(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		return fmt.Errorf("%w: %v", crtx.ErrConflict, err)
	}
	return err
}
