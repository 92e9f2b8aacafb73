package storetest

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// PostgresDSN returns the PostgreSQL server that tests may use, from
// CRTX_TEST_POSTGRES. Without it the test is skipped on a developer's
// machine but fails in CI (CI or CRTX_REQUIRE_POSTGRES set), so a CI run can
// never pass by skipping the PostgreSQL tests.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("CRTX_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	if os.Getenv("CI") != "" || os.Getenv("CRTX_REQUIRE_POSTGRES") != "" {
		t.Fatal("CRTX_TEST_POSTGRES is not set, and PostgreSQL tests may not be skipped in CI")
	}
	t.Skip("set CRTX_TEST_POSTGRES=postgres://… to run the PostgreSQL tests")
	return ""
}

// Schema creates an empty schema for one test on the server at dsn and
// drops it afterwards, so tests never see each other's rows.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := "crtx_test_" + strings.ToLower(crtx.RandomBase62(12))
	if _, err := db.Exec(`CREATE SCHEMA ` + name); err != nil {
		db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
		db.Close()
	})
	return name
}

// SchemaDSN returns the test server's DSN with an empty schema of this
// test's own as its search path, for a crtxd --db.
func SchemaDSN(t testing.TB) string {
	t.Helper()
	dsn := PostgresDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + Schema(t, dsn)
}
