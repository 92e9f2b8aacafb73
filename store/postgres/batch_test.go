package postgres

import (
	"context"
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
