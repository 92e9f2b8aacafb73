package postgres

import (
	"context"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/jackc/pgx/v5"
)

// channel is where replicas tell each other of executions' changes. It is
// the database's, not the schema's: stores in other schemas of the same
// database hear ids they do not have, and ignore them.
const channel = "crtx_executions"

var _ crtx.Notifier = (*DB)(nil)

// Notify sends msg on channel (crtx.Notifier), in a transaction of its
// own: the transactions that NOTIFY commit one at a time (they hold a lock
// of the whole database from sending until commit), which an execution's
// own transactions should not have to.
func (d *DB) Notify(ctx context.Context, msg string) error {
	_, err := d.Write.ExecContext(ctx, `SELECT pg_notify($1, $2)`, channel, msg)
	return err
}

// Listen listens on channel on a connection of its own, outside the pool,
// whose connections each statement borrows and gives back (crtx.Notifier).
func (d *DB) Listen(ctx context.Context, listening func(), fn func(msg string)) error {
	conn, err := pgx.ConnectConfig(ctx, d.conn.Copy())
	if err != nil {
		return fmt.Errorf("postgres listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
		return fmt.Errorf("postgres listen: %w", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("postgres listen: %w", err)
		}
		fn(n.Payload)
	}
}
