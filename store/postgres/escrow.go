package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
)

// DB is the PostgreSQL store: the SQL engine, with an execution's first
// and last transactions each sent as one statement, a function call in
// autocommit (migration 0008), instead of a dozen round trips inside
// BEGIN and COMMIT during which the wallet's row stays locked.
type DB struct{ *sqldb.DB }

// SetConns sets how many connections the store keeps open.
func (d *DB) SetConns(n int) {
	d.Write.SetMaxOpenConns(n)
	d.Write.SetMaxIdleConns(n)
}

// OpenExecution writes o in one round trip (crtx.Store).
func (d *DB) OpenExecution(ctx context.Context, o *crtx.Opening) error {
	exec, err := sqldb.ExecutionRow(o.Execution)
	if err != nil {
		return err
	}
	var idem map[string]any
	if i := o.Idempotency; i != nil {
		idem = map[string]any{"wallet": i.Wallet, "key": i.Key, "request_hash": i.RequestHash,
			"execution_id": i.ExecutionID, "created_at": i.CreatedAt.UnixMicro()}
	}
	plan, err := sqldb.PlanTransaction(&o.Escrow, o.Accounts...)
	if err != nil {
		return err
	}
	args, err := jsonb(exec, idem, plan)
	if err != nil {
		return err
	}
	err = d.Retry(ctx, func() error {
		return d.Write.QueryRowContext(ctx, `SELECT crtx_open_execution($1, $2, $3)`, args...).Scan(&o.Escrow.Seq)
	})
	switch code(err) {
	case "":
		return err
	case "23505":
		return fmt.Errorf("idempotency key %q: %w", o.Idempotency.Key, crtx.ErrConflict)
	case "23514":
		return fmt.Errorf("execution %s: %w", o.Execution.ID, crtx.ErrInsufficientFunds)
	case "CX001":
		return fmt.Errorf("agent %s: %w", o.Execution.AgentID, crtx.ErrTermsChanged)
	case "CX002":
		return fmt.Errorf("key %s: %w", o.Execution.KeyID, crtx.ErrNotFound)
	case "CX003":
		return fmt.Errorf("key %s: %w", o.Execution.KeyID, crtx.ErrSpendLimit)
	}
	return err
}

// CloseExecution writes c in one round trip (crtx.Store).
func (d *DB) CloseExecution(ctx context.Context, c *crtx.Closing) (bool, error) {
	exec, err := sqldb.ExecutionRow(c.Execution)
	if err != nil {
		return false, err
	}
	var hook map[string]any
	if w := c.Webhook; w != nil {
		hook = map[string]any{"execution_id": w.ExecutionID, "url": w.URL, "next_at": w.NextAt.UnixMicro(), "created_at": w.CreatedAt.UnixMicro()}
	}
	plan, err := sqldb.PlanTransaction(&c.Record, c.Accounts...)
	if err != nil {
		return false, err
	}
	args, err := jsonb(exec, plan, hook)
	if err != nil {
		return false, err
	}
	var content *string
	if c.Result != "" {
		content = &c.Result
	}
	args = []any{args[0], content, args[1], args[2]}
	err = d.Retry(ctx, func() error {
		return d.Write.QueryRowContext(ctx, `SELECT crtx_close_execution($1, $2, $3, $4)`, args...).Scan(&c.Record.Seq)
	})
	if code(err) == "23514" {
		return false, fmt.Errorf("execution %s: %w", c.Execution.ID, crtx.ErrInsufficientFunds)
	}
	return err == nil && c.Record.Seq != 0, err
}

// jsonb encodes each value as a jsonb argument; a nil map stays NULL.
func jsonb(vs ...any) ([]any, error) {
	args := make([]any, len(vs))
	for i, v := range vs {
		if m, ok := v.(map[string]any); ok && m == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		args[i] = string(b)
	}
	return args, nil
}
