package storetest

import (
	"os"
	"testing"
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
