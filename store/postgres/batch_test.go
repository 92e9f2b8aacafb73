package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
