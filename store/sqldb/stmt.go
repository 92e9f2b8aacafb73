package sqldb

import (
	"context"
	"database/sql"
)

// maxStmts bounds the cache: queries built from filters come in a bounded
// number of shapes, but a bound keeps a surprise from growing it forever.
const maxStmts = 512

// stmtCache keeps the prepared statements of one connection, so the hot
// statements are parsed and planned once instead of on every call. It is
// used by one goroutine at a time (the connection's owner).
type stmtCache struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

func newStmtCache(conn *sql.Conn) *stmtCache {
	return &stmtCache{conn: conn, stmts: map[string]*sql.Stmt{}}
}

// get returns q prepared, or nil when there is no cache or q cannot be
// prepared (running it unprepared then reports the error).
func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	if s, ok := c.stmts[q]; ok {
		return s
	}
	if len(c.stmts) >= maxStmts {
		return nil
	}
	s, err := c.conn.PrepareContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil
	}
	c.stmts[q] = s
	return s
}

func (c *stmtCache) close() {
	for _, s := range c.stmts {
		s.Close()
	}
	clear(c.stmts)
}

// stmtQuerier runs a prepared statement as a Querier; the query text is
// the statement's own.
type stmtQuerier struct{ s *sql.Stmt }

func (q stmtQuerier) ExecContext(ctx context.Context, _ string, args ...any) (sql.Result, error) {
	return q.s.ExecContext(ctx, args...)
}

func (q stmtQuerier) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return q.s.QueryContext(ctx, args...)
}

func (q stmtQuerier) QueryRowContext(ctx context.Context, _ string, args ...any) *sql.Row {
	return q.s.QueryRowContext(ctx, args...)
}
