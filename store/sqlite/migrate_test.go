package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/storetest"
)

// A database an older crtxd left, with postings and references in tables
// of their own, reads the same after migration 0008.
func TestLedgerRowsMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crtx.db")
	old, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := sqldb.Migrate(ctx, old, storetest.Before(t, migrations, "migrations", 8), "migrations", ""); err != nil {
		t.Fatal(err)
	}
	storetest.LedgerRowsMigration(t, old, func() crtx.Store {
		old.Close()
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Blocks sealed before migration 0015 keep verifying after it.
func TestHashVersionMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crtx.db")
	old, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := sqldb.Migrate(ctx, old, storetest.Before(t, migrations, "migrations", 15), "migrations", ""); err != nil {
		t.Fatal(err)
	}
	storetest.HashVersionMigration(t, old, func() crtx.Store {
		old.Close()
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
