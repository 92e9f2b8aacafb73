// Package testdb opens throwaway stores of either engine for tests in
// other packages. It lives apart from storetest because the engines' own
// tests import storetest, and this package imports the engines.
package testdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/sqlite"
)

// SQLite opens a fresh SQLite store in a temporary folder, closed when the
// test ends.
func SQLite(tb testing.TB) *sqldb.DB {
	tb.Helper()
	return closing[*sqldb.DB](tb)(sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "crtx.db")))
}

// Postgres opens a store on the PostgreSQL server at dsn with schema as its
// search path, closed when the test ends.
func Postgres(tb testing.TB, dsn, schema string) *postgres.DB {
	tb.Helper()
	return closing[*postgres.DB](tb)(postgres.Open(context.Background(), dsn, schema))
}

// closing fails tb if a store did not open, and closes it when tb ends.
func closing[S interface{ Close() error }](tb testing.TB) func(S, error) S {
	return func(s S, err error) S {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}
}
