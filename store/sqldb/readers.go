package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// readers is a fixed set of read connections, each keeping its prepared
// statements, handed out one transaction at a time. database/sql's pool
// cannot keep statements per connection without preparing them on all.
type readers struct {
	db   *sql.DB
	free chan *reader
}

type reader struct {
	conn  *sql.Conn
	stmts *stmtCache
}

func newReaders(ctx context.Context, db *sql.DB, n int) (*readers, error) {
	rs := &readers{db: db, free: make(chan *reader, n)}
	for range n {
		r, err := rs.open(ctx)
		if err != nil {
			rs.close()
			return nil, err
		}
		rs.free <- r
	}
	return rs, nil
}

func (rs *readers) open(ctx context.Context) (*reader, error) {
	conn, err := rs.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("reader connection: %w", err)
	}
	return &reader{conn: conn, stmts: newStmtCache(conn)}, nil
}

// view runs fn in a read transaction (one snapshot) on a free reader.
func (rs *readers) view(ctx context.Context, d Dialect, fn func(crtx.Tx) error) error {
	var r *reader
	select {
	case r = <-rs.free:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { rs.free <- rs.reset(ctx, r) }()
	if _, err := r.conn.ExecContext(ctx, `BEGIN`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return fn((&tx{q: r.conn, d: d, stmts: r.stmts}).roles())
}

// reset ends the read transaction (it has nothing to commit; ending it
// releases the snapshot). A connection that cannot end it is replaced.
func (rs *readers) reset(ctx context.Context, r *reader) *reader {
	ctx = context.WithoutCancel(ctx)
	if _, err := r.conn.ExecContext(ctx, `ROLLBACK`); err == nil || !inTx(ctx, r.conn) {
		return r
	}
	r.stmts.close()
	r.conn.Close()
	for {
		if n, err := rs.open(ctx); err == nil {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inTx reports whether conn is inside a transaction: BEGIN fails there.
func inTx(ctx context.Context, conn *sql.Conn) bool {
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return true
	}
	conn.ExecContext(ctx, `ROLLBACK`)
	return false
}

func (rs *readers) close() {
	for {
		select {
		case r := <-rs.free:
			r.stmts.close()
			r.conn.Close()
		default:
			return
		}
	}
}
