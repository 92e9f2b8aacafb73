package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/storetest"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// open gives each test a schema of its own on the CI's PostgreSQL.
func open(t *testing.T) crtx.Store {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	s, err := postgres.Open(context.Background(), dsn, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
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
