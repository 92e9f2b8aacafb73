package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/crtx-market/crtx"
)

// maxGroup bounds how many transactions share one commit, so the first of
// a group does not wait long for the last.
const maxGroup = 128

// ErrClosed is returned by Update after Close.
var ErrClosed = errors.New("sqldb: store closed")

// group is the single writer of an engine with one writer connection:
// SQLite's, the only engine that turns it on (GroupCommit). It runs the
// read-write transactions that arrive while it is busy as one database
// transaction, each inside its own savepoint, and
// commits them together: a commit's fixed cost (the WAL frames of every
// page touched, the syscalls) is shared by the group instead of paid by
// each. Each caller is answered only after the commit that holds its
// writes, so what it is told has happened is durable; a transaction whose
// function fails is rolled back to its savepoint and leaves the others be.
type group struct {
	conn  *sql.Conn
	stmts *stmtCache
	d     Dialect
	reqs  chan *request
	stop  chan struct{}
	done  chan struct{}

	commits, txs atomic.Int64
	busy         atomic.Int64 // nanoseconds spent in commit
}

type request struct {
	ctx context.Context
	fn  func(crtx.Tx) error
	err error
	// panicked holds what fn panicked with, for the caller to panic again.
	panicked any
	done     chan struct{}
}

func newGroup(ctx context.Context, db *sql.DB, d Dialect) (*group, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("writer connection: %w", err)
	}
	g := &group{conn: conn, stmts: newStmtCache(conn), d: d,
		reqs: make(chan *request), stop: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g, nil
}

// update runs fn in the next group and waits for its commit. Once fn is
// running, the caller waits for the group even if ctx ends, because its
// writes may yet commit.
func (g *group) update(ctx context.Context, fn func(crtx.Tx) error) error {
	r := &request{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case g.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.stop:
		return ErrClosed
	}
	<-r.done
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

func (g *group) loop() {
	defer close(g.done)
	for {
		var batch []*request
		select {
		case r := <-g.reqs:
			batch = append(batch, r)
		case <-g.stop:
			return
		}
		// Whatever arrived while the last group ran joins this one; nothing
		// waits for more, so a lone transaction commits at once.
	gather:
		for len(batch) < maxGroup {
			select {
			case r := <-g.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		g.commit(batch)
	}
}

// commit runs a batch and answers its callers. When the batch fails as a
// whole (its commit, or a statement that ended the transaction), each
// transaction runs again alone, so one caller's trouble is not the others'.
func (g *group) commit(batch []*request) {
	start := time.Now()
	defer func() { g.busy.Add(int64(time.Since(start))) }()
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			close(r.done)
			continue
		}
		live = append(live, r)
	}
	if err := g.run(live); err != nil && len(live) > 1 {
		for _, r := range live {
			r.err, r.panicked = nil, nil
			g.run([]*request{r})
		}
	}
	for _, r := range live {
		close(r.done)
	}
}

// run executes batch in one transaction and reports an error that undid
// the whole batch; each request's own outcome is in its err.
func (g *group) run(batch []*request) error {
	if len(batch) == 0 {
		return nil
	}
	fail := func(err error) error {
		g.exec(`ROLLBACK`)
		for _, r := range batch {
			if r.err == nil && r.panicked == nil {
				r.err = err
			}
		}
		return err
	}
	if _, err := g.exec(`BEGIN IMMEDIATE`); err != nil {
		return fail(fmt.Errorf("begin: %w", err))
	}
	alone := len(batch) == 1
	for _, r := range batch {
		if !alone {
			if _, err := g.exec(`SAVEPOINT g`); err != nil {
				return fail(fmt.Errorf("savepoint: %w", err))
			}
		}
		r.err, r.panicked = g.call(r)
		if r.err != nil || r.panicked != nil {
			if alone {
				g.exec(`ROLLBACK`)
				return nil
			}
			if _, err := g.exec(`ROLLBACK TO g`); err != nil {
				return fail(fmt.Errorf("rollback to savepoint: %w", err))
			}
		}
		if !alone {
			if _, err := g.exec(`RELEASE g`); err != nil {
				return fail(fmt.Errorf("release savepoint: %w", err))
			}
		}
	}
	if _, err := g.exec(`COMMIT`); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	g.commits.Add(1)
	for _, r := range batch {
		if r.err == nil && r.panicked == nil {
			g.txs.Add(1)
		}
	}
	return nil
}

// exec runs one of the writer's own statements (BEGIN, SAVEPOINT, …),
// prepared once.
func (g *group) exec(q string) (sql.Result, error) {
	ctx := context.Background()
	if s := g.stmts.get(ctx, q); s != nil {
		return s.ExecContext(ctx)
	}
	return g.conn.ExecContext(ctx, q)
}

func (g *group) call(r *request) (err error, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return r.fn((&tx{q: g.conn, d: g.d, stmts: g.stmts, detached: true}).roles()), nil
}

// close stops the writer after the group it is running and releases its
// connection.
func (g *group) close() error {
	close(g.stop)
	<-g.done
	g.stmts.close()
	return g.conn.Close()
}

// WriterStats counts the work of the group writer (SQLite's single
// writer) since it opened.
type WriterStats struct {
	Commits      int64 // database commits
	Transactions int64 // read-write transactions they held
	// Busy is the time the writer spent running groups: when it nears the
	// wall-clock time, the writer is what bounds the store.
	Busy time.Duration
}
