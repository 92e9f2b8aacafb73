package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/storetest"
)

// A batch's statement that hangs (here, a server that sleeps) fails its
// callers after the batcher's timeout, and the batcher goes on serving
// the calls after it: one stuck connection does not hold every opening
// of the process.
func TestBatchStatementTimesOut(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := Open(ctx, dsn, storetest.Schema(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := newBatcher(s.DB, `SELECT 0, NULL::bigint, NULL, NULL, NULL, NULL FROM pg_sleep(($1::jsonb->0->>'sleep')::float)`)
	defer b.close()
	b.timeout = 300 * time.Millisecond
	start := time.Now()
	if _, err := b.do(ctx, []byte(`{"sleep":60}`), ""); err == nil {
		t.Fatal("a statement that hangs answered")
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("the caller of a hung statement waited %v", waited)
	}
	if it, err := b.do(ctx, []byte(`{"sleep":0}`), ""); err != nil || it.refused != nil {
		t.Errorf("the call after it: %+v, %v", it, err)
	}
}

// echo is a batch query that answers item i with its "n", after sleeping
// the first item's "sleep" seconds.
const echo = `SELECT (x.i - 1)::int, (x.v->>'n')::bigint, NULL, NULL, NULL, NULL
	FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(v, i),
	pg_sleep(coalesce(($1::jsonb->0->>'sleep')::float, 0))`

func testBatcher(t *testing.T, query string) *batcher {
	t.Helper()
	dsn := storetest.PostgresDSN(t)
	s, err := Open(context.Background(), dsn, storetest.Schema(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b := newBatcher(s.DB, query)
	t.Cleanup(b.close)
	return b
}

// A statement the server refuses for one item's data (here a number that
// is not one: class 22) is sent again item by item, so only that item
// fails; one refused for anything else fails every item of it, and is not
// sent again item by item while the process's later calls wait.
func TestBatchFallsBackOnlyForData(t *testing.T) {
	b := testBatcher(t, echo)
	var batch []*item
	for i := range 6 {
		batch = append(batch, &item{args: fmt.Appendf(nil, `{"n":"%d"}`, i+1), order: fmt.Sprint(i)})
	}
	batch[3].args = []byte(`{"n":"four"}`)
	b.run(batch)
	for _, it := range batch {
		if it.order == "3" {
			if it.err == nil {
				t.Errorf("the item that is not a number answered %d", it.seq)
			}
			continue
		}
		if it.err != nil || fmt.Sprint(it.seq-1) != it.order {
			t.Errorf("item %s beside the refused one: %d, %v", it.order, it.seq, it.err)
		}
	}
	if _, err := b.db.Write.Exec(`CREATE FUNCTION fail_if_many(n int) RETURNS int LANGUAGE plpgsql AS $$
		BEGIN IF n > 1 THEN RAISE EXCEPTION 'cancelled' USING ERRCODE = '57014'; END IF; RETURN n; END $$`); err != nil {
		t.Fatal(err)
	}
	b.query = `SELECT (x.i - 1)::int, fail_if_many(jsonb_array_length($1::jsonb))::bigint, NULL, NULL, NULL, NULL
		FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(v, i)`
	batch = []*item{{args: []byte(`{}`)}, {args: []byte(`{}`)}, {args: []byte(`{}`)}}
	b.run(batch)
	for i, it := range batch {
		if it.err == nil {
			t.Errorf("item %d of a cancelled statement answered %d: it was sent again alone", i, it.seq)
		}
	}
}

// Large items are not gathered past maxBatchBytes: four of 3 MiB queued
// behind a running statement go two by two.
func TestBatchBoundedByBytes(t *testing.T) {
	b := testBatcher(t, echo)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := b.do(context.Background(), []byte(`{"n":"0","sleep":1}`), ""); err != nil {
			t.Error(err)
		}
	})
	time.Sleep(200 * time.Millisecond) // the sleeping statement runs
	pad := strings.Repeat("x", 3<<20)
	for i := range 4 {
		wg.Go(func() {
			it, err := b.do(context.Background(), fmt.Appendf(nil, `{"n":"%d","pad":"%s"}`, i+1, pad), "")
			if err != nil || it.seq != int64(i+1) {
				t.Errorf("item %d: %+v, %v", i+1, it, err)
			}
		})
	}
	wg.Wait()
	if n := b.batches.Load(); n != 3 {
		t.Errorf("five items, four of 3 MiB, took %d statements; want 3 (one, then two of two)", n)
	}
}

// Two replicas' batches that share a wallet and a retried
// Idempotency-Key wait for each other in line, not in a cycle: each takes
// the wallet's row before any item's key. Before, replica 1's batch held
// the wallet (its first item's) and waited for the key replica 2's held
// while replica 2's waited for the wallet, until PostgreSQL broke the
// deadlock by failing one; here a failed batch is not run again.
func TestBatchesShareAWalletWithoutACycle(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	var replicas [2]*DB
	for i := range replicas {
		s, err := Open(ctx, dsn, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		s.RetryBudget = time.Nanosecond
		replicas[i] = s
	}
	opening, alice := storetest.Openings(t, replicas[0])
	newItem := func(id, key, idem string) *item {
		o := opening(id, key)
		o.MaxKeyInFlight, o.MaxWalletInFlight = 0, 0
		if idem != "" {
			o.Idempotency = &crtx.Idempotency{Wallet: o.Execution.Wallet, Environment: o.Execution.Environment, Key: idem,
				RequestHash: "h", ExecutionID: id, CreatedAt: o.Execution.InitiatedAt}
		}
		wallet := crtx.AccountAddress(crtx.AccountWallet, o.Execution.Wallet)
		args, err := openingArgs(o, wallet)
		if err != nil {
			t.Fatal(err)
		}
		return &item{args: args, order: openingOrder(o, wallet)}
	}
	a, b, c := newItem("ea", "key_1", ""), newItem("eb", "key_1", "k2"), newItem("ec", "key_2", "k2")
	// Another transaction holds the wallet while both batches start, so
	// that each has done what it does before it waits.
	hold, err := replicas[0].Write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `UPDATE accounts SET balance = balance WHERE environment = 'devnet' AND address = $1`, alice.Address); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { replicas[0].opens.run([]*item{b, a}) })
	time.Sleep(300 * time.Millisecond)
	wg.Go(func() { replicas[1].opens.run([]*item{c}) })
	time.Sleep(300 * time.Millisecond)
	hold.Commit()
	wg.Wait()
	for _, it := range []*item{a, b, c} {
		if it.err != nil {
			t.Errorf("opening %q: its batch failed: %v", it.order, it.err)
		}
	}
	if (b.refused == nil) == (c.refused == nil) {
		t.Errorf("the key k2 kept by %v and %v; want exactly one", b.refused == nil, c.refused == nil)
	}
}
