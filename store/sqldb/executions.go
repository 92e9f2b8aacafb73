package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

const execColumns = `id, environment, wallet, key_id, agent_id, agent_name, creator, endpoint_url, signing_public_key,
	task, parameters, timeout_seconds, async, webhook_url, cost, creator_amount, platform_amount, status,
	error_code, error_message, result_cid, result_hash, signature, tokens_used, execution_time_ms,
	initiated_at, dispatched_at, completed_at, deadline, lease_until, attempts, owner, listing_tx, record_tx, private,
	held, base_price, price_per_1k, usage_signature`

func nullInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

func execArgs(e crtx.Execution) []any {
	return []any{e.ID, e.Environment, e.Wallet, e.KeyID, e.AgentID, e.AgentName, e.Creator, e.EndpointURL, e.SigningPublicKey,
		e.Task, string(e.Parameters), e.TimeoutSeconds, e.Async, e.WebhookURL, e.Cost, e.CreatorAmount, e.PlatformAmount, e.Status,
		e.ErrorCode, e.ErrorMessage, e.ResultCID, e.ResultHash, e.Signature, nullInt(e.TokensUsed), nullInt(e.ExecutionTimeMS),
		us(e.InitiatedAt), nullUS(e.DispatchedAt), nullUS(e.CompletedAt), us(e.Deadline), us(e.LeaseUntil), e.Attempts, e.Owner,
		e.ListingTx, e.RecordTx, e.Private, e.Held, e.Base, e.Per1k, e.UsageSignature}
}

func scanExecution(row interface{ Scan(...any) error }) (crtx.Execution, error) {
	var e crtx.Execution
	var params string
	var tokens, elapsed, dispatched, completed sql.NullInt64
	var initiated, deadline, lease int64
	err := row.Scan(&e.ID, &e.Environment, &e.Wallet, &e.KeyID, &e.AgentID, &e.AgentName, &e.Creator, &e.EndpointURL,
		&e.SigningPublicKey, &e.Task, &params, &e.TimeoutSeconds, &e.Async, &e.WebhookURL, &e.Cost, &e.CreatorAmount,
		&e.PlatformAmount, &e.Status, &e.ErrorCode, &e.ErrorMessage, &e.ResultCID, &e.ResultHash, &e.Signature,
		&tokens, &elapsed, &initiated, &dispatched, &completed, &deadline, &lease, &e.Attempts, &e.Owner,
		&e.ListingTx, &e.RecordTx, &e.Private, &e.Held, &e.Base, &e.Per1k, &e.UsageSignature)
	e.Parameters = json.RawMessage(params)
	if e.Held == 0 {
		// A row a replica of the release before wrote without the
		// column (an x402 opening): it holds its cost, at its price.
		e.Held, e.Base = e.Cost, e.Cost
	}
	if tokens.Valid {
		e.TokensUsed = &tokens.Int64
	}
	if elapsed.Valid {
		e.ExecutionTimeMS = &elapsed.Int64
	}
	e.InitiatedAt, e.Deadline, e.LeaseUntil = fromUS(initiated), fromUS(deadline), fromUS(lease)
	e.DispatchedAt, e.CompletedAt = fromNullUS(dispatched), fromNullUS(completed)
	return e, err
}

func (t executionRows) InsertExecution(ctx context.Context, e crtx.Execution) error {
	_, err := t.exec(ctx, `INSERT INTO executions (`+execColumns+`) VALUES (`+
		strings.TrimSuffix(strings.Repeat("?, ", 39), ", ")+`)`, execArgs(e)...)
	return err
}

func (t executionRows) UpdateExecution(ctx context.Context, e crtx.Execution) error {
	r, err := t.exec(ctx, `UPDATE executions SET status = ?, error_code = ?, error_message = ?, result_cid = ?,
		result_hash = ?, signature = ?, tokens_used = ?, execution_time_ms = ?, dispatched_at = ?, completed_at = ?,
		lease_until = ?, attempts = ?, owner = ?, record_tx = ? WHERE id = ?`,
		e.Status, e.ErrorCode, e.ErrorMessage, e.ResultCID, e.ResultHash, e.Signature, nullInt(e.TokensUsed),
		nullInt(e.ExecutionTimeMS), nullUS(e.DispatchedAt), nullUS(e.CompletedAt), us(e.LeaseUntil), e.Attempts, e.Owner,
		e.RecordTx, e.ID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("execution %s: %w", e.ID, crtx.ErrNotFound)
	}
	return nil
}

func (t executionRows) FinishExecution(ctx context.Context, e crtx.Execution) (bool, error) {
	// A completed call writes what it was charged (a metered call's
	// charge, under its hold); a failed one keeps the row's, whatever the
	// view of it zeroed (an x402 payment never sent).
	charged := e.Status == crtx.ExecCompleted
	r, err := t.exec(ctx, `UPDATE executions SET status = ?, error_code = ?, error_message = ?, result_cid = ?,
		result_hash = ?, signature = ?, tokens_used = ?, execution_time_ms = ?, completed_at = ?, record_tx = ?,
		cost = CASE WHEN ? THEN ? ELSE cost END, creator_amount = CASE WHEN ? THEN ? ELSE creator_amount END,
		platform_amount = CASE WHEN ? THEN ? ELSE platform_amount END, usage_signature = ?
		WHERE id = ? AND status IN ('pending', 'running')`,
		e.Status, e.ErrorCode, e.ErrorMessage, e.ResultCID, e.ResultHash, e.Signature, nullInt(e.TokensUsed),
		nullInt(e.ExecutionTimeMS), nullUS(e.CompletedAt), e.RecordTx, charged, e.Cost, charged, e.CreatorAmount,
		charged, e.PlatformAmount, e.UsageSignature, e.ID)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

func (t executionRows) Execution(ctx context.Context, id string) (crtx.Execution, error) {
	e, err := scanExecution(t.queryRow(ctx, `SELECT `+execColumns+` FROM executions WHERE id = ?`, id))
	return e, notFound(err, "execution")
}

func (t executionRows) ListExecutions(ctx context.Context, q crtx.ExecutionQuery) ([]crtx.Execution, int, error) {
	where := []string{`wallet = ?`, `environment = ?`}
	args := []any{q.Wallet, q.Environment}
	if q.Creator != "" {
		where[0], args[0] = `creator = ?`, q.Creator
	}
	if q.Status != "" {
		where, args = append(where, `status = ?`), append(args, q.Status)
	}
	if q.AgentID != "" {
		where, args = append(where, `agent_id = ?`), append(args, q.AgentID)
	}
	if q.KeyID != "" {
		where, args = append(where, `key_id = ?`), append(args, q.KeyID)
	}
	if q.NotByCreator {
		where = append(where, `wallet <> creator`)
	}
	if q.From != nil {
		where, args = append(where, `initiated_at >= ?`), append(args, us(*q.From))
	}
	if q.To != nil {
		where, args = append(where, `initiated_at < ?`), append(args, us(*q.To))
	}
	cond := ` WHERE ` + strings.Join(where, " AND ")
	var total int
	count := `SELECT count(*) FROM executions` + cond
	if len(where) == 2 && q.Creator == "" {
		// All of a wallet's executions: each was counted against one of the
		// wallet's keys of its environment in the transaction that made it
		// (AddKeyUsage), so the keys' counts sum to the total, in time that
		// does not grow with the history as counting the rows does.
		count = `SELECT CAST(coalesce(sum(execution_count), 0) AS BIGINT) FROM api_keys` + cond
	}
	if err := t.queryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := t.query(ctx, `SELECT `+execColumns+` FROM executions`+cond+
		` ORDER BY initiated_at DESC, id LIMIT ? OFFSET ?`, append(args, q.Limit, q.Offset)...)
	out, err := collect(rows, err, scanExecution)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

const webhookColumns = `execution_id, url, attempts, next_at, delivered_at, last_error, created_at`

func (t executionRows) CreatorEarnings(ctx context.Context, creator string, env crtx.Environment) ([]crtx.DayEarnings, error) {
	rows, err := t.query(ctx, `SELECT completed_at / 86400000000 AS day, CAST(sum(creator_amount) AS BIGINT), count(*)
		FROM executions WHERE creator = ? AND environment = ? AND status IN ('completed', 'disputed')
		GROUP BY day ORDER BY day`, creator, env)
	return collect(rows, err, func(row interface{ Scan(...any) error }) (crtx.DayEarnings, error) {
		var day int64
		var d crtx.DayEarnings
		err := row.Scan(&day, &d.Earned, &d.Executions)
		d.Date = time.Unix(day*86400, 0).UTC().Format("2006-01-02")
		return d, err
	})
}

func (t executionRows) CreatorEarningsByAgent(ctx context.Context, creator string, env crtx.Environment) (map[string]crtx.USDC, error) {
	return collectMap[string, crtx.USDC](t.query(ctx, `SELECT agent_id, CAST(sum(creator_amount) AS BIGINT) FROM executions
		WHERE creator = ? AND environment = ? AND status IN ('completed', 'disputed') GROUP BY agent_id`, creator, env))
}

func (t executionRows) AgentRuns(ctx context.Context, agentID string, env crtx.Environment, since time.Time) ([]crtx.DayRuns, error) {
	// A range of executions_agent (agent_id, initiated_at).
	rows, err := t.query(ctx, `SELECT initiated_at / 86400000000 AS day,
		count(*), CAST(sum(CASE WHEN status IN ('completed', 'disputed') THEN 1 ELSE 0 END) AS BIGINT)
		FROM executions WHERE agent_id = ? AND initiated_at >= ? AND environment = ? AND wallet <> creator
		AND status IN ('completed', 'disputed', 'failed') AND coalesce(error_code, '') NOT IN (?, ?)
		GROUP BY day ORDER BY day`, agentID, us(since), env, crtx.CodeCancelled, crtx.CodeInvalidInput)
	return collect(rows, err, func(row interface{ Scan(...any) error }) (crtx.DayRuns, error) {
		var day int64
		var d crtx.DayRuns
		err := row.Scan(&day, &d.Ended, &d.Succeeded)
		d.Date = time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
		return d, err
	})
}

func (t executionRows) WalletSpending(ctx context.Context, wallet string, env crtx.Environment, since time.Time) ([]crtx.DaySpend, error) {
	// A call's spending is what it cost in the end, as crtx.Execution.Charge
	// has it: nothing when it failed, less what an upheld dispute refunded
	// (never below nothing).
	rows, err := t.query(ctx, `SELECT e.initiated_at / 86400000000 AS day, e.agent_id, max(e.agent_name),
		CAST(sum(CASE WHEN e.status = 'failed' OR coalesce(d.refunded, 0) >= e.cost THEN 0
			ELSE e.cost - coalesce(d.refunded, 0) END) AS BIGINT), count(*)
		FROM executions e LEFT JOIN disputes d ON d.execution_id = e.id
		WHERE e.wallet = ? AND e.environment = ? AND e.initiated_at >= ?
		GROUP BY day, e.agent_id ORDER BY day, e.agent_id`, wallet, env, us(since))
	return collect(rows, err, func(row interface{ Scan(...any) error }) (crtx.DaySpend, error) {
		var day int64
		var d crtx.DaySpend
		err := row.Scan(&day, &d.AgentID, &d.AgentName, &d.Spent, &d.Calls)
		d.Date = time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
		return d, err
	})
}

// ExecutionRow is an execution as its row holds it, column by column: for
// an engine that hands a whole row to the database (store/postgres).
func ExecutionRow(e crtx.Execution) (map[string]any, error) {
	names := strings.Split(execColumns, ",")
	args := execArgs(e)
	row := make(map[string]any, len(names))
	for i, name := range names {
		v, err := driver.DefaultParameterConverter.ConvertValue(args[i])
		if err != nil {
			return nil, fmt.Errorf("execution %s: %s: %w", e.ID, name, err)
		}
		row[strings.TrimSpace(name)] = v
	}
	return row, nil
}
