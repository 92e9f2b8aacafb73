package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/jackc/pgx/v5/pgconn"
)

// OpenExecution writes o in the next batch of openings (crtx.Store).
func (d *DB) OpenExecution(ctx context.Context, o *crtx.Opening) error {
	wallet := crtx.AccountAddress(crtx.AccountWallet, o.Execution.Wallet)
	args, err := openingArgs(o, wallet)
	if err != nil {
		return err
	}
	it, err := d.opens.do(ctx, args, openingOrder(o, wallet))
	if err != nil {
		return err
	}
	if it.refused != nil {
		return openRefused(o, it.refused)
	}
	o.Escrow.Seq = it.seq
	return nil
}

// openingArgs is o as an item of crtx_execution_batch; wallet is its
// wallet's account address.
func openingArgs(o *crtx.Opening, wallet string) ([]byte, error) {
	exec, err := sqldb.ExecutionRow(o.Execution)
	if err != nil {
		return nil, err
	}
	var idem map[string]any
	if i := o.Idempotency; i != nil {
		idem = map[string]any{"wallet": i.Wallet, "environment": i.Environment, "key": i.Key, "request_hash": i.RequestHash,
			"execution_id": i.ExecutionID, "created_at": i.CreatedAt.UnixMicro()}
	}
	plan, err := sqldb.PlanTransaction(&o.Escrow, o.Accounts...)
	if err != nil {
		return nil, err
	}
	return itemArgs(map[string]any{"exec": exec, "idem": idem, "post": plan,
		"key_max": o.MaxKeyInFlight, "wallet_max": o.MaxWalletInFlight,
		"lock": wallet})
}

// openingOrder is where an opening runs in its batch. A batch first locks
// its wallets' account rows, all at once in this order (migration 0017),
// as every other writer of accounts does (sqldb's LockAccounts); then each
// opening takes its Idempotency-Key's entry and its API key's row, both
// its wallet's, so no two batches wait on each other in a cycle.
func openingOrder(o *crtx.Opening, wallet string) string {
	var idem string
	if o.Idempotency != nil {
		idem = o.Idempotency.Key
	}
	e := o.Execution
	return strings.Join([]string{string(e.Environment), wallet, idem, e.ID}, "\x00")
}

// closingOrder is where a closing runs in its batch: a completed one
// shares its result's row (by content id) with other closings, and a
// failed one its wallet's account row (the refund, locked with the
// batch's others before any item runs, as is the wallet of a completed
// metered call that returns part of its hold), so the first run by
// content id and the others by account.
func closingOrder(c *crtx.Closing, wallet string) string {
	e := c.Execution
	if e.Status == crtx.ExecCompleted {
		return strings.Join([]string{"0", e.ResultCID, e.ID}, "\x00")
	}
	return strings.Join([]string{"1", string(e.Environment), wallet, e.ID}, "\x00")
}

// openRefused maps an opening's refusal onto the domain's errors.
func openRefused(o *crtx.Opening, pe *pgconn.PgError) error {
	switch pe.Code {
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
	return pe
}

// CloseExecution writes c in the next batch of closings (crtx.Store).
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
	a := map[string]any{"exec": exec, "post": plan, "hook": hook}
	var wallet string
	if c.Execution.Status == crtx.ExecCompleted {
		a["content"] = c.Execution.Result
	}
	if c.Execution.Status != crtx.ExecCompleted || c.Execution.Returned() > 0 {
		// The refund's, or the return of a metered call's unused hold,
		// credited with the closing (crtx.LedgerTx.Defers).
		wallet = crtx.AccountAddress(crtx.AccountWallet, c.Execution.Wallet)
		a["lock"] = wallet
	}
	args, err := itemArgs(a)
	if err != nil {
		return false, err
	}
	it, err := d.closes.do(ctx, args, closingOrder(c, wallet))
	if err != nil {
		return false, err
	}
	if pe := it.refused; pe != nil {
		if insufficient(pe) {
			return false, fmt.Errorf("execution %s: %w", c.Execution.ID, crtx.ErrInsufficientFunds)
		}
		return false, pe
	}
	c.Record.Seq = it.seq
	return c.Record.Seq != 0, nil
}

// insufficient reports a refusal for lack of funds: a balance CHECK of
// accounts, or a paying account that does not exist (crtx_post's CX004).
func insufficient(pe *pgconn.PgError) bool {
	return pe != nil && (pe.Code == "CX004" || (pe.Code == "23514" && pe.TableName == "accounts"))
}
