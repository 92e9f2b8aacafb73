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
	"net/url"
	"os"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// readers is how many read transactions run at once.
const readers = 4

//go:embed migrations/*.sql
var migrations embed.FS

func dsn(path string, readOnly bool) string {
	return dsnWith(path, readOnly, false)
}

// dsnWith is dsn; writer marks the writer's connection, which leaves
// checkpoints to the checkpointer.
func dsnWith(path string, readOnly, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// Group commit gives each transaction a savepoint; the pages it
		// saves belong in memory, not in a temporary file.
		q.Add("_pragma", "temp_store(MEMORY)")
		// BEGIN IMMEDIATE takes the write lock up front, so a transaction
		// never fails half-way on a lock upgrade.
		q.Set("_txlock", "immediate")
	}
	if writer {
		// The checkpointer copies the WAL back as it grows, but only a
		// checkpoint the writer runs itself, between two transactions,
		// can finish it so the WAL starts over; by then little is left to
		// copy. 16,000 pages is 64 MiB of WAL.
		q.Add("_pragma", "wal_autocheckpoint(16000)")
		// After the WAL starts over, cut its file back to this.
		q.Add("_pragma", "journal_size_limit(67108864)")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and applies every
// migration it has not seen.
func Open(ctx context.Context, path string) (*sqldb.DB, error) {
	// Create the file private first: SQLite gives its -wal and -shm files
	// the database file's permissions.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	f.Close()
	w, err := sql.Open("sqlite", dsnWith(path, false, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := sqldb.Migrate(ctx, w, migrations, "migrations", ""); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers + 1) // and one for Ping
	r.SetMaxIdleConns(readers + 1)
	db := &sqldb.DB{Write: w, Read: r, Dialect: dialect{}}
	ckpt, err := startCheckpointer(path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.OnClose(ckpt.close)
	if err := db.GroupCommit(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := db.KeepReaders(ctx, readers); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return db, nil
}

type dialect struct{}

func (dialect) Rebind(q string) string { return q }

func code(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

func (dialect) IsCheck(err error) bool { return code(err) == sqlite3.SQLITE_CONSTRAINT_CHECK }

func (dialect) IsUnique(err error) bool {
	c := code(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// IsRetryable is false: the single writer connection never conflicts.
func (dialect) IsRetryable(error) bool { return false }

func (dialect) JSONField(column, key string) string {
	return "json_extract(" + column + ", '$." + strings.ReplaceAll(key, "'", "") + "')"
}

// Search matches with FTS5, each word quoted as a prefix.
func (dialect) Search(words []string) (string, string, any) {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + w + `"*`
	}
	return ` JOIN agents_fts ON agents_fts.rowid = a.rowid`, `agents_fts MATCH ?`, strings.Join(q, " ")
}

// SearchRank is BM25 (name weighs most, then tags, tagline, description);
// it is negative, lower first.
func (dialect) SearchRank() string {
	return `bm25(agents_fts, 10.0, 4.0, 1.0, 6.0) * ` + sqldb.Reliability
}

func (dialect) IndexText(ctx context.Context, tx sqldb.Querier, a crtx.Agent) error {
	var rowid int64
	if err := tx.QueryRowContext(ctx, `SELECT rowid FROM agents WHERE id = ?`, a.ID).Scan(&rowid); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM agents_fts WHERE rowid = ?`, rowid); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO agents_fts (rowid, name, tagline, description, tags) VALUES (?, ?, ?, ?, ?)`,
		rowid, a.Name, a.Tagline, a.Description, strings.Join(a.Tags, " "))
	return err
}

// SkipLocked is empty: the single writer already serializes claimers.
func (dialect) SkipLocked() string { return "" }

// LockAccounts is empty: the single writer holds every lock.
func (dialect) LockAccounts() string { return "" }

// TryLock needs no query: the single writer holds every lock.
func (dialect) TryLock() string { return "" }

// IndexedBy: SQLite plans without statistics (no ANALYZE), and prefers an
// equality on an index's leading columns to a smaller partial index.
func (dialect) IndexedBy(index string) string { return " INDEXED BY " + index }
