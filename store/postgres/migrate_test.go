package postgres

import (
	"context"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// A database an older crtxd left, with postings and references in tables
// of their own, reads the same after migration 0003.
func TestLedgerRowsMigration(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	old := stdlib.OpenDB(*cfg)
	defer old.Close()
	if err := sqldb.Migrate(ctx, old, storetest.Before(t, migrations, "migrations", 3), "migrations", migrationLock); err != nil {
		t.Fatal(err)
	}
	storetest.LedgerRowsMigration(t, old, func() crtx.Store {
		s, err := Open(ctx, dsn, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Blocks sealed before migration 0011 keep verifying after it.
func TestHashVersionMigration(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	old := stdlib.OpenDB(*cfg)
	defer old.Close()
	if err := sqldb.Migrate(ctx, old, storetest.Before(t, migrations, "migrations", 11), "migrations", migrationLock); err != nil {
		t.Fatal(err)
	}
	storetest.HashVersionMigration(t, old, func() crtx.Store {
		s, err := Open(ctx, dsn, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
