package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/crtx-market/crtx/store/testdb"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// open gives each test a schema of its own on the CI's PostgreSQL.
func open(t *testing.T) crtx.Store {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	return testdb.Postgres(t, dsn, schema)
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

// Opening twice applies no migration a second time.
func TestReopen(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	for range 2 {
		s, err := postgres.Open(context.Background(), dsn, schema)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	db, _ := sql.Open("pgx", dsn)
	defer db.Close()
	var n int
	db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %q.schema_migrations`, schema)).Scan(&n)
	files, _ := os.ReadDir("migrations")
	if n != len(files) {
		t.Errorf("%d migrations recorded, %d embedded", n, len(files))
	}
}

// A transaction that PostgreSQL refuses as a serialization failure runs
// again until the retry budget is spent, then fails with ErrBusy; the same
// transaction under UpdateGuarded (READ COMMITTED) waits for the row and
// succeeds the first time.
func TestRetryBudget(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	var dbs [2]*postgres.DB
	for i := range dbs {
		dbs[i] = testdb.Postgres(t, dsn, schema)
	}
	s, other := dbs[0], dbs[1]
	s.RetryBudget = 100 * time.Millisecond
	if err := s.Update(ctx, func(tx crtx.Tx) error { return tx.SetMeta(ctx, "k", "0") }); err != nil {
		t.Fatal(err)
	}
	// Each attempt reads k, another transaction changes k and commits,
	// then the attempt writes k: a lost update SERIALIZABLE refuses.
	collide := func(attempts *int) func(crtx.Tx) error {
		return func(tx crtx.Tx) error {
			*attempts++
			if _, err := tx.Meta(ctx, "k"); err != nil {
				return err
			}
			if err := other.Update(ctx, func(tx crtx.Tx) error { return tx.SetMeta(ctx, "k", strconv.Itoa(*attempts)) }); err != nil {
				return err
			}
			return tx.SetMeta(ctx, "k", "mine")
		}
	}
	var attempts int
	start := time.Now()
	err := s.Update(ctx, collide(&attempts))
	if !errors.Is(err, crtx.ErrBusy) || attempts < 2 {
		t.Fatalf("Update: %v after %d attempts, want ErrBusy after several", err, attempts)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the 100 ms budget took %v", took)
	}
	attempts = 0
	if err := s.UpdateGuarded(ctx, collide(&attempts)); err != nil || attempts != 1 {
		t.Fatalf("UpdateGuarded: %v after %d attempts, want success at once", err, attempts)
	}
	var v string
	s.View(ctx, func(tx crtx.Tx) (err error) { v, err = tx.Meta(ctx, "k"); return err })
	if v != "mine" {
		t.Errorf("k = %q, want the guarded write", v)
	}
}

// crtx_open_execution inserts a whole row built from sqldb.ExecutionRow:
// a column that the row lacks would be NULL on PostgreSQL alone, whatever
// its default.
func TestExecutionRowHasEveryColumn(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	s := testdb.Postgres(t, dsn, schema)
	rows, err := s.Read.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = 'executions' ORDER BY column_name`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var columns []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		columns = append(columns, c)
	}
	row, err := sqldb.ExecutionRow(crtx.Execution{})
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(row))
	if !slices.Equal(keys, columns) {
		t.Errorf("ExecutionRow has\n%v\nthe table has\n%v", keys, columns)
	}
}

// A replica of the release before opens executions through the function of
// three arguments, with a row that has none of the columns added since:
// each must take its default, not NULL (which a NOT NULL column refuses,
// failing every execution that replica opens while an upgrade rolls).
func TestOpeningByTheReleaseBefore(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s := testdb.Postgres(t, dsn, storetest.Schema(t, dsn))
	opening, _ := storetest.Openings(t, s)
	o := opening("old-1", "key_1")
	row, err := sqldb.ExecutionRow(o.Execution)
	if err != nil {
		t.Fatal(err)
	}
	// owner came with PostgreSQL migration 0010, private with 0015.
	delete(row, "owner")
	delete(row, "private")
	plan, err := sqldb.PlanTransaction(&o.Escrow, o.Accounts...)
	if err != nil {
		t.Fatal(err)
	}
	exec, _ := json.Marshal(row)
	post, _ := json.Marshal(plan)
	if _, err := s.Write.ExecContext(ctx, `SELECT crtx_open_execution($1, NULL, $2)`, string(exec), string(post)); err != nil {
		t.Fatalf("opening as the release before does: %v", err)
	}
	var private bool
	var owner string
	if err := s.Read.QueryRowContext(ctx, `SELECT private, owner FROM executions WHERE id = 'old-1'`).Scan(&private, &owner); err != nil {
		t.Fatal(err)
	}
	if private || owner != "" {
		t.Errorf("private %v, owner %q; want the columns' defaults", private, owner)
	}
}
