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

// Databases an older crtxd left read and verify the same after the
// migration that changed them: 0008 moved postings and references into
// their transactions' rows; 0015 named the hash encoding of transactions
// and blocks; 0020 gave blocks their anchors.
func TestMigrations(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		check   func(*testing.T, *sql.DB, func() crtx.Store)
	}{
		{"ledger rows", 8, storetest.LedgerRowsMigration},
		{"hash versions", 15, storetest.HashVersionMigration},
		{"anchors", 20, storetest.AnchorMigration},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "crtx.db")
			old, err := sql.Open("sqlite", dsn(path, false))
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			if err := sqldb.Migrate(ctx, old, storetest.Before(t, migrations, "migrations", c.version), "migrations", ""); err != nil {
				t.Fatal(err)
			}
			c.check(t, old, func() crtx.Store {
				old.Close()
				s, err := Open(ctx, path)
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
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "crtx.db"), false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := sqldb.Migrate(context.Background(), db, migrations, "migrations", ""); err != nil {
		t.Fatal(err)
	}
	storetest.BlocksAnchorOnce(t, db)
}
