package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/jackc/pgx/v5/pgconn"
)

// maxBatch bounds the items of one statement. Each item is a
// subtransaction, and past 64 of them in one transaction PostgreSQL's
// snapshots stop listing them and every reader of the rows looks them up
// in pg_subtrans instead.
const maxBatch = 64

// maxBatchBytes bounds the arguments of one statement: a result may be
// megabytes, and 64 of them would pass what one jsonb value can hold. An
// item larger than this goes alone.
const maxBatchBytes = 8 << 20

// batchTimeout bounds one attempt of a batch's statement. The batcher runs
// one statement at a time, so a connection that hangs would otherwise hold
// every opening (or closing) of the process, not only its own callers'.
// An opening takes milliseconds; this is for a server that stopped
// answering. A caller told the statement failed may still find its item
// committed, as with any call whose answer was lost.
const batchTimeout = 30 * time.Second

// errStopped is returned to callers once the store is closed.
var errStopped = errors.New("postgres: store closed")

// batcher is a group commit for one of an execution's two statements (its
// opening, or its closing): the calls that arrive while a batch runs are
// sent together as the next one, a single statement of a PL/pgSQL function
// that runs each item in a block of its own (migration 0017), so that the
// batch pays one commit, one round trip and one function call, and a
// refused item is answered with its own error and leaves the others be.
// Each caller is answered after the statement that holds its item
// committed, so what it is told has happened is durable.
type batcher struct {
	db      *sqldb.DB
	query   string // one call of the batch function, $1 the items as a jsonb array
	timeout time.Duration
	reqs    chan *item
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once

	batches, items atomic.Int64
	busy           atomic.Int64 // nanoseconds with a statement in flight
}

// item is one call: its arguments as a JSON object, and, once its batch
// ran, its ledger transaction's seq or its refusal.
type item struct {
	args  []byte
	order string // batches run their items sorted by it, so two batches lock shared rows in one order (openingOrder, closingOrder)
	seq   int64
	// refused is the error the item's block raised, as the single
	// statement would have: the item wrote nothing.
	refused *pgconn.PgError
	err     error // the batch's, when it failed as a whole
	done    chan struct{}
}

func newBatcher(db *sqldb.DB, query string) *batcher {
	b := &batcher{db: db, query: query, timeout: batchTimeout, reqs: make(chan *item), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

// do runs args in the next batch and waits for its statement. Once the
// batch has taken it, the caller waits even if ctx ends, because the item
// may yet commit.
func (b *batcher) do(ctx context.Context, args []byte, order string) (*item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	it := &item{args: args, order: order, done: make(chan struct{})}
	select {
	case b.reqs <- it:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.stop:
		return nil, errStopped
	}
	<-it.done
	return it, it.err
}

func (b *batcher) loop() {
	defer close(b.done)
	var next *item // taken, but past the last batch's bytes
	for {
		batch := []*item{next}
		if next == nil {
			select {
			case it := <-b.reqs:
				batch[0] = it
			case <-b.stop:
				return
			}
		}
		next = nil
		// Whatever arrived while the last batch ran joins this one; nothing
		// waits for more, so a lone call is sent at once.
		size := len(batch[0].args)
	gather:
		for len(batch) < maxBatch {
			select {
			case it := <-b.reqs:
				if size += len(it.args); size > maxBatchBytes {
					next = it
					break gather
				}
				batch = append(batch, it)
			default:
				break gather
			}
		}
		b.run(batch)
		for _, it := range batch {
			close(it.done)
		}
	}
}

// run sends batch as one statement, again whole on a serialization failure
// or a deadlock (the statement, in autocommit, then committed nothing).
// When the server refuses the statement's data, each item is sent alone,
// so one call's trouble is not the others'.
func (b *batcher) run(batch []*item) {
	start := time.Now()
	defer func() { b.busy.Add(int64(time.Since(start))) }()
	slices.SortStableFunc(batch, func(x, y *item) int { return cmp.Compare(x.order, y.order) })
	if err := b.send(batch); len(batch) > 1 && itemsFault(err) {
		for _, it := range batch {
			b.send([]*item{it})
		}
	}
}

// itemsFault reports a statement refused for what one of its items holds:
// a data exception (class 22: a NUL in a result, say) or a limit of the
// server's passed (class 54). Any other failure (a cancel, a connection
// lost, a server shutting down) would fail each item alone as well, one
// timeout after another, while every later call of the process waits.
func itemsFault(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "54"))
}

// send runs batch's statement and records each item's outcome.
func (b *batcher) send(batch []*item) error {
	var args strings.Builder // its String does not copy what may be megabytes
	args.WriteByte('[')
	for n, it := range batch {
		if n > 0 {
			args.WriteByte(',')
		}
		args.Write(it.args)
	}
	args.WriteByte(']')
	err := b.db.Retry(context.Background(), func() error {
		for _, it := range batch {
			it.seq, it.refused = 0, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		defer cancel()
		rows, err := b.db.Write.QueryContext(ctx, b.query, args.String())
		if err != nil {
			return err
		}
		defer rows.Close()
		answered := 0
		for rows.Next() {
			var (
				i                  int
				seq                sql.NullInt64
				code, cons, tab, m sql.NullString
			)
			if err := rows.Scan(&i, &seq, &code, &cons, &tab, &m); err != nil {
				return err
			}
			if i < 0 || i >= len(batch) {
				return fmt.Errorf("postgres: batch answered item %d of %d", i, len(batch))
			}
			it := batch[i]
			it.seq = seq.Int64
			if code.Valid {
				it.refused = &pgconn.PgError{Severity: "ERROR", Code: code.String, ConstraintName: cons.String,
					TableName: tab.String, Message: m.String}
			}
			answered++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if answered != len(batch) {
			return fmt.Errorf("postgres: batch of %d answered %d", len(batch), answered)
		}
		return nil
	})
	for _, it := range batch {
		it.err = err
	}
	if err == nil {
		b.batches.Add(1)
		b.items.Add(int64(len(batch)))
	}
	return err
}

// close stops the batcher after the batch it is running.
func (b *batcher) close() {
	b.once.Do(func() { close(b.stop) })
	<-b.done
}

// itemArgs encodes an item's arguments, leaving out the nil maps (a
// function's absent argument is NULL, not JSON null).
func itemArgs(args map[string]any) ([]byte, error) {
	for k, v := range args {
		if m, ok := v.(map[string]any); ok && m == nil {
			delete(args, k)
		}
	}
	return json.Marshal(args)
}

// WriterStats counts the batches of openings and closings since the store
// opened: Commits are statements, Transactions the calls they held, Busy
// the time a statement of either was in flight.
func (d *DB) WriterStats() sqldb.WriterStats {
	var w sqldb.WriterStats
	for _, b := range []*batcher{d.opens, d.closes} {
		w.Commits += b.batches.Load()
		w.Transactions += b.items.Load()
		w.Busy += time.Duration(b.busy.Load())
	}
	return w
}
