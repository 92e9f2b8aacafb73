package sqldb

import (
	"context"
	"errors"
	"fmt"

	"github.com/crtx-market/crtx"
)

// An execution's first and last transactions, as statements in one
// transaction. An engine that can run them in one round trip overrides
// these (store/postgres).

// OpenExecution writes o (crtx.Store).
func (d *DB) OpenExecution(ctx context.Context, o *crtx.Opening) error {
	return d.UpdateGuarded(ctx, func(tx crtx.Tx) error { return writeOpening(ctx, tx, o) })
}

// CloseExecution writes c (crtx.Store).
func (d *DB) CloseExecution(ctx context.Context, c *crtx.Closing) (bool, error) {
	var ok bool
	err := d.UpdateGuarded(ctx, func(tx crtx.Tx) (err error) {
		ok, err = c.Write(ctx, tx)
		return err
	})
	return ok, err
}

// writeOpening writes o inside tx, statement by statement.
func writeOpening(ctx context.Context, tx crtx.Tx, o *crtx.Opening) error {
	e := o.Execution
	if o.Idempotency != nil {
		if err := tx.Executions.InsertIdempotency(ctx, *o.Idempotency); err != nil {
			return err
		}
	}
	if err := crtx.CheckTerms(ctx, tx, e); err != nil {
		return err
	}
	if err := tx.Executions.InsertExecution(ctx, e); err != nil {
		return notConflict(err)
	}
	// The wallet and the key are the rows this transaction shares with the
	// wallet's other executions: written last (the wallet by the posting's
	// last statement), they stay locked for the fewest statements.
	if err := tx.Ledger.InsertTransaction(ctx, &o.Escrow, o.Accounts...); err != nil {
		return notConflict(err)
	}
	if err := tx.Access.AddKeyUsage(ctx, e.KeyID, e.Cost); err != nil {
		return err
	}
	return inFlightLimits(ctx, tx, o)
}

// inFlightLimits refuses an opening that takes its key's or its wallet's
// executions in flight, itself counted, past o's limits.
func inFlightLimits(ctx context.Context, tx crtx.Tx, o *crtx.Opening) error {
	if o.MaxKeyInFlight <= 0 && o.MaxWalletInFlight <= 0 {
		return nil
	}
	e := o.Execution
	all, key, err := tx.Executions.InFlight(ctx, e.Wallet, e.Environment, e.KeyID)
	switch {
	case err != nil:
		return err
	case o.MaxKeyInFlight > 0 && key > o.MaxKeyInFlight:
		return fmt.Errorf("key %s: %d in flight: %w", e.KeyID, key, crtx.ErrKeyInFlight)
	case o.MaxWalletInFlight > 0 && all > o.MaxWalletInFlight:
		return fmt.Errorf("wallet %s: %d in flight: %w", e.Wallet, all, crtx.ErrWalletInFlight)
	}
	return nil
}

// notConflict keeps a unique key other than the Idempotency-Key's (an id
// used twice) from reading as the key being taken.
func notConflict(err error) error {
	if errors.Is(err, crtx.ErrConflict) {
		return fmt.Errorf("not the Idempotency-Key: %v", err)
	}
	return err
}
