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
	initiated_at, dispatched_at, completed_at, deadline, lease_until, attempts, owner`

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
		us(e.InitiatedAt), nullUS(e.DispatchedAt), nullUS(e.CompletedAt), us(e.Deadline), us(e.LeaseUntil), e.Attempts, e.Owner}
}

func scanExecution(row interface{ Scan(...any) error }) (crtx.Execution, error) {
	var e crtx.Execution
	var params string
	var tokens, elapsed, dispatched, completed sql.NullInt64
	var initiated, deadline, lease int64
	err := row.Scan(&e.ID, &e.Environment, &e.Wallet, &e.KeyID, &e.AgentID, &e.AgentName, &e.Creator, &e.EndpointURL,
		&e.SigningPublicKey, &e.Task, &params, &e.TimeoutSeconds, &e.Async, &e.WebhookURL, &e.Cost, &e.CreatorAmount,
		&e.PlatformAmount, &e.Status, &e.ErrorCode, &e.ErrorMessage, &e.ResultCID, &e.ResultHash, &e.Signature,
		&tokens, &elapsed, &initiated, &dispatched, &completed, &deadline, &lease, &e.Attempts, &e.Owner)
	e.Parameters = json.RawMessage(params)
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

func (t *tx) InsertExecution(ctx context.Context, e crtx.Execution) error {
	_, err := t.exec(ctx, `INSERT INTO executions (`+execColumns+`) VALUES (`+
		strings.TrimSuffix(strings.Repeat("?, ", 32), ", ")+`)`, execArgs(e)...)
	return err
}

func (t *tx) UpdateExecution(ctx context.Context, e crtx.Execution) error {
	r, err := t.exec(ctx, `UPDATE executions SET status = ?, error_code = ?, error_message = ?, result_cid = ?,
		result_hash = ?, signature = ?, tokens_used = ?, execution_time_ms = ?, dispatched_at = ?, completed_at = ?,
		lease_until = ?, attempts = ?, owner = ? WHERE id = ?`,
		e.Status, e.ErrorCode, e.ErrorMessage, e.ResultCID, e.ResultHash, e.Signature, nullInt(e.TokensUsed),
		nullInt(e.ExecutionTimeMS), nullUS(e.DispatchedAt), nullUS(e.CompletedAt), us(e.LeaseUntil), e.Attempts, e.Owner, e.ID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("execution %s: %w", e.ID, crtx.ErrNotFound)
	}
	return nil
}

func (t *tx) FinishExecution(ctx context.Context, e crtx.Execution) (bool, error) {
	r, err := t.exec(ctx, `UPDATE executions SET status = ?, error_code = ?, error_message = ?, result_cid = ?,
		result_hash = ?, signature = ?, tokens_used = ?, execution_time_ms = ?, completed_at = ?
		WHERE id = ? AND status IN ('pending', 'running')`,
		e.Status, e.ErrorCode, e.ErrorMessage, e.ResultCID, e.ResultHash, e.Signature, nullInt(e.TokensUsed),
		nullInt(e.ExecutionTimeMS), nullUS(e.CompletedAt), e.ID)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

func (t *tx) Execution(ctx context.Context, id string) (crtx.Execution, error) {
	e, err := scanExecution(t.queryRow(ctx, `SELECT `+execColumns+` FROM executions WHERE id = ?`, id))
	return e, notFound(err, "execution")
}

func (t *tx) ListExecutions(ctx context.Context, q crtx.ExecutionQuery) ([]crtx.Execution, int, error) {
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
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []crtx.Execution{}
	for rows.Next() {
		e, err := scanExecution(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// ClaimExecutions needs no row locks on SQLite: the single writer
// connection already serializes every claimer.
func (t *tx) ClaimExecutions(ctx context.Context, owner string, now, until time.Time, silent []string, limit int) ([]crtx.Execution, error) {
	ids := make([]any, 0, len(silent))
	for _, id := range silent {
		if id != owner {
			ids = append(ids, id)
		}
	}
	in, ids := inList(ids)
	rows, err := t.query(ctx, `SELECT `+execColumns+` FROM executions
		WHERE status IN ('pending', 'running') AND (lease_until < ? OR owner IN `+in+`)
		ORDER BY lease_until LIMIT ?`+t.d.SkipLocked(), append(append([]any{us(now)}, ids...), limit)...)
	if err != nil {
		return nil, err
	}
	var out []crtx.Execution
	for rows.Next() {
		e, err := scanExecution(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].LeaseUntil, out[i].Owner = until, owner
		out[i].Attempts++
		if _, err := t.exec(ctx, `UPDATE executions SET lease_until = ?, attempts = ?, owner = ? WHERE id = ?`,
			us(until), out[i].Attempts, owner, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *tx) Heartbeat(ctx context.Context, replica string, at, forgetBefore time.Time) error {
	if _, err := t.exec(ctx, `INSERT INTO replicas (id, heartbeat_at) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, replica, us(at)); err != nil {
		return err
	}
	_, err := t.exec(ctx, `DELETE FROM replicas WHERE heartbeat_at < ?`, us(forgetBefore))
	return err
}

func (t *tx) RenewLease(ctx context.Context, id, owner string, until time.Time) error {
	r, err := t.exec(ctx, `UPDATE executions SET lease_until = ? WHERE id = ? AND owner = ? AND status IN ('pending', 'running')`,
		us(until), id, owner)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("execution %s is not %s's to renew: %w", id, owner, crtx.ErrNotFound)
	}
	return nil
}

func (t *tx) Replicas(ctx context.Context) (map[string]time.Time, error) {
	rows, err := t.query(ctx, `SELECT id, heartbeat_at FROM replicas`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = fromUS(at)
	}
	return out, rows.Err()
}

func (t *tx) AddKeyUsage(ctx context.Context, keyID string, cost crtx.USDC) error {
	// Conditions, not the CHECK constraint (which stays as the guard), so
	// that a refusal fails no statement: PostgreSQL would abort the
	// transaction, and the caller still reads the key to explain it.
	r, err := t.exec(ctx, `UPDATE api_keys SET execution_count = execution_count + 1, total_spent = total_spent + ?
		WHERE id = ? AND revoked_at IS NULL AND (spend_limit IS NULL OR total_spent + ? <= spend_limit)`, cost, keyID, cost)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	var revoked bool
	err = t.queryRow(ctx, `SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = ?`, keyID).Scan(&revoked)
	if err != nil {
		return notFound(err, "api key "+keyID)
	}
	if revoked {
		return fmt.Errorf("key %s is revoked: %w", keyID, crtx.ErrNotFound)
	}
	return fmt.Errorf("key %s: %w", keyID, crtx.ErrSpendLimit)
}

func (t *tx) PutResult(ctx context.Context, cid, content string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO results (cid, content, created_at) VALUES (?, ?, ?) ON CONFLICT (cid) DO NOTHING`, cid, content, us(at))
	return err
}

func (t *tx) Result(ctx context.Context, cid string) (string, error) {
	var s string
	err := t.queryRow(ctx, `SELECT content FROM results WHERE cid = ?`, cid).Scan(&s)
	return s, notFound(err, "result")
}

func (t *tx) InsertIdempotency(ctx context.Context, i crtx.Idempotency) error {
	_, err := t.exec(ctx, `INSERT INTO idempotency_keys (wallet, environment, key, request_hash, execution_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		i.Wallet, i.Environment, i.Key, i.RequestHash, i.ExecutionID, us(i.CreatedAt))
	return err
}

func (t *tx) Idempotency(ctx context.Context, wallet string, env crtx.Environment, key string) (crtx.Idempotency, error) {
	i := crtx.Idempotency{Wallet: wallet, Environment: env, Key: key}
	var created int64
	err := t.queryRow(ctx, `SELECT request_hash, execution_id, status, body, created_at FROM idempotency_keys
		WHERE wallet = ? AND environment = ? AND key = ?`, wallet, env, key).Scan(&i.RequestHash, &i.ExecutionID, &i.Status, &i.Body, &created)
	i.CreatedAt = fromUS(created)
	return i, notFound(err, "idempotency key")
}

func (t *tx) CompleteIdempotency(ctx context.Context, wallet string, env crtx.Environment, key string, status int, body []byte) error {
	_, err := t.exec(ctx, `UPDATE idempotency_keys SET status = ?, body = ? WHERE wallet = ? AND environment = ? AND key = ?`,
		status, body, wallet, env, key)
	return err
}

func (t *tx) DeleteIdempotency(ctx context.Context, wallet string, env crtx.Environment, key string) error {
	_, err := t.exec(ctx, `DELETE FROM idempotency_keys WHERE wallet = ? AND environment = ? AND key = ?`, wallet, env, key)
	return err
}

func (t *tx) InsertWebhook(ctx context.Context, w crtx.Webhook) error {
	_, err := t.exec(ctx, `INSERT INTO webhook_deliveries (execution_id, url, next_at, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (execution_id) DO NOTHING`, w.ExecutionID, w.URL, us(w.NextAt), us(w.CreatedAt))
	return err
}

const webhookColumns = `execution_id, url, attempts, next_at, delivered_at, last_error, created_at`

func scanWebhook(row interface{ Scan(...any) error }) (crtx.Webhook, error) {
	var w crtx.Webhook
	var next, created int64
	var delivered sql.NullInt64
	err := row.Scan(&w.ExecutionID, &w.URL, &w.Attempts, &next, &delivered, &w.LastError, &created)
	w.NextAt, w.CreatedAt, w.DeliveredAt = fromUS(next), fromUS(created), fromNullUS(delivered)
	return w, err
}

func (t *tx) ClaimWebhooks(ctx context.Context, now, until, since time.Time, limit int) ([]crtx.Webhook, error) {
	rows, err := t.query(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries
		WHERE delivered_at IS NULL AND next_at <= ? AND created_at > ? ORDER BY next_at LIMIT ?`+t.d.SkipLocked(), us(now), us(since), limit)
	if err != nil {
		return nil, err
	}
	var out []crtx.Webhook
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Attempts++
		out[i].NextAt = until
		if _, err := t.exec(ctx, `UPDATE webhook_deliveries SET attempts = ?, next_at = ? WHERE execution_id = ?`,
			out[i].Attempts, us(until), out[i].ExecutionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *tx) UpdateWebhook(ctx context.Context, w crtx.Webhook) error {
	_, err := t.exec(ctx, `UPDATE webhook_deliveries SET attempts = ?, next_at = ?, delivered_at = ?, last_error = ? WHERE execution_id = ?`,
		w.Attempts, us(w.NextAt), nullUS(w.DeliveredAt), w.LastError, w.ExecutionID)
	return err
}

func (t *tx) Webhook(ctx context.Context, executionID string) (crtx.Webhook, error) {
	w, err := scanWebhook(t.queryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries WHERE execution_id = ?`, executionID))
	return w, notFound(err, "webhook")
}

func (t *tx) CreatorEarnings(ctx context.Context, creator string, env crtx.Environment) ([]crtx.DayEarnings, error) {
	rows, err := t.query(ctx, `SELECT completed_at / 86400000000 AS day, CAST(sum(creator_amount) AS BIGINT), count(*)
		FROM executions WHERE creator = ? AND environment = ? AND status IN ('completed', 'disputed')
		GROUP BY day ORDER BY day`, creator, env)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []crtx.DayEarnings{}
	for rows.Next() {
		var day int64
		var d crtx.DayEarnings
		if err := rows.Scan(&day, &d.Earned, &d.Executions); err != nil {
			return nil, err
		}
		d.Date = time.Unix(day*86400, 0).UTC().Format("2006-01-02")
		out = append(out, d)
	}
	return out, rows.Err()
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
