package postgres

import (
	"context"
	"database/sql"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Databases an older crtxd left read and verify the same after the
// migration that changed them: 0003 moved postings and references into
// their transactions' rows; 0011 named the hash encoding of transactions
// and blocks; 0016 gave blocks their anchors.
func TestMigrations(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		check   func(*testing.T, *sql.DB, func() crtx.Store)
	}{
		{"ledger rows", 3, storetest.LedgerRowsMigration},
		{"hash versions", 11, storetest.HashVersionMigration},
		{"anchors", 16, storetest.AnchorMigration},
	} {
		t.Run(c.name, func(t *testing.T) {
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
			if err := sqldb.Migrate(ctx, old, storetest.Before(t, migrations, "migrations", c.version), "migrations", migrationLock); err != nil {
				t.Fatal(err)
			}
			c.check(t, old, func() crtx.Store {
				s, err := Open(ctx, dsn, schema)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}

// Blocks stay append-only in the database but for their anchor, taken once.
func TestBlocksAnchorOnce(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if err := sqldb.Migrate(context.Background(), db, migrations, "migrations", migrationLock); err != nil {
		t.Fatal(err)
	}
	storetest.BlocksAnchorOnce(t, db)
}
