package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqlite"
	"github.com/crtx-market/crtx/store/storetest"
)

func open(t *testing.T) crtx.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "crtx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

// Opening twice applies no migration a second time.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crtx.db")
	for range 2 {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if st, err := os.Stat(f); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}
