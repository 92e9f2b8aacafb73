package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqlite"
)

// freshMeta marks a store made by FreshStore that has run only so since:
// the one kind FreshStore empties again.
const freshMeta = "fresh_store"

// ErrNotFresh is returned for FreshStore on a store that it did not make,
// or that has run without it since: its money is kept, never emptied.
var ErrNotFresh = errors.New("the data folder holds a store that was not made fresh for this use")

// emptyStore removes the SQLite store's files from the data folder, if it
// is one FreshStore made and only ever ran so; this process holds the
// folder alone, so no other reads the files.
func emptyStore(ctx context.Context, cfg Config, alone bool) error {
	if isPostgres(cfg.DB) {
		return errors.New("a fresh store is the data folder's SQLite one, not --db's PostgreSQL")
	}
	if !alone {
		return errors.New("a fresh store needs this process to hold the data folder alone, which this system cannot lock")
	}
	path := filepath.Join(cfg.Data, "crtx.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	v, err := crtx.Read(ctx, crtx.Store(s), func(tx crtx.Tx) (string, error) { return tx.System.Meta(ctx, freshMeta) })
	s.Close()
	if err != nil && !errors.Is(err, crtx.ErrNotFound) {
		return err
	}
	if v != "true" {
		return fmt.Errorf("%w: --data %s", ErrNotFresh, cfg.Data)
	}
	for _, f := range []string{"crtx.db", "crtx.db-wal", "crtx.db-shm"} {
		if err := os.Remove(filepath.Join(cfg.Data, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// markFresh records whether the store runs as FreshStore made it: a store
// that runs once without it keeps its money from then on.
func markFresh(ctx context.Context, store crtx.Store, fresh bool) error {
	return store.Update(ctx, func(tx crtx.Tx) error {
		v, err := tx.System.Meta(ctx, freshMeta)
		if err != nil && !errors.Is(err, crtx.ErrNotFound) {
			return err
		}
		switch {
		case fresh:
			return tx.System.SetMeta(ctx, freshMeta, "true")
		case v == "true":
			return tx.System.SetMeta(ctx, freshMeta, "false")
		}
		return nil
	})
}
