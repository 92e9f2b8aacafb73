package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/jackc/pgx/v5/pgconn"
)

// OpenExecution writes o in one round trip (crtx.Store).
func (d *DB) OpenExecution(ctx context.Context, o *crtx.Opening) error {
	exec, err := sqldb.ExecutionRow(o.Execution)
	if err != nil {
		return err
	}
	var idem map[string]any
	if i := o.Idempotency; i != nil {
		idem = map[string]any{"wallet": i.Wallet, "environment": i.Environment, "key": i.Key, "request_hash": i.RequestHash,
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
		return d.Write.QueryRowContext(ctx, `SELECT crtx_open_execution($1, $2, $3, $4, $5)`,
			append(args, o.MaxKeyInFlight, o.MaxWalletInFlight)...).Scan(&o.Escrow.Seq)
	})
	var pe *pgconn.PgError
	errors.As(err, &pe)
	switch code(err) {
	case "":
		return err
	case "23505":
		if pe.ConstraintName == "idempotency_keys_pkey" {
			return fmt.Errorf("idempotency key %q: %w", o.Idempotency.Key, crtx.ErrConflict)
		}
	case "23514", "CX004":
		if insufficient(pe) {
			return fmt.Errorf("execution %s: %w", o.Execution.ID, crtx.ErrInsufficientFunds)
		}
	case "CX001":
		return fmt.Errorf("agent %s: %w", o.Execution.AgentID, crtx.ErrTermsChanged)
	case "CX002":
		return fmt.Errorf("key %s: %w", o.Execution.KeyID, crtx.ErrNotFound)
	case "CX003":
		return fmt.Errorf("key %s: %w", o.Execution.KeyID, crtx.ErrSpendLimit)
	case "CX005":
		return fmt.Errorf("key %s: %w", o.Execution.KeyID, crtx.ErrKeyInFlight)
	case "CX006":
		return fmt.Errorf("wallet %s: %w", o.Execution.Wallet, crtx.ErrWalletInFlight)
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
	if c.Execution.Status == crtx.ExecCompleted {
		content = &c.Execution.Result
	}
	args = []any{args[0], content, args[1], args[2]}
	err = d.Retry(ctx, func() error {
		return d.Write.QueryRowContext(ctx, `SELECT crtx_close_execution($1, $2, $3, $4)`, args...).Scan(&c.Record.Seq)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && insufficient(pe) {
		return false, fmt.Errorf("execution %s: %w", c.Execution.ID, crtx.ErrInsufficientFunds)
	}
	return err == nil && c.Record.Seq != 0, err
}

// insufficient reports a refusal for lack of funds: a balance CHECK of
// accounts, or a paying account that does not exist (crtx_post's CX004).
func insufficient(pe *pgconn.PgError) bool {
	return pe != nil && (pe.Code == "CX004" || (pe.Code == "23514" && pe.TableName == "accounts"))
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
