package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// checkpointInterval is how often the WAL is copied back into the
// database file.
const checkpointInterval = 250 * time.Millisecond

// checkpointer copies the WAL into the database file from a connection of
// its own, so that the single writer never stops to do it (SQLite would
// otherwise checkpoint inside the commit that fills the WAL to 1,000
// pages). A PASSIVE checkpoint waits for no one: it copies what no reader
// still needs, and the next one copies the rest.
type checkpointer struct {
	db   *sql.DB
	stop chan struct{}
	done chan struct{}
}

func startCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			// An error (the database busy, say) is retried at the next tick.
			c.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
}

func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}
