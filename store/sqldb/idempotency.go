package sqldb

import (
	"context"

	"github.com/crtx-market/crtx"
)

func (t executionRows) InsertIdempotency(ctx context.Context, i crtx.Idempotency) error {
	_, err := t.exec(ctx, `INSERT INTO idempotency_keys (wallet, environment, key, request_hash, execution_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		i.Wallet, i.Environment, i.Key, i.RequestHash, i.ExecutionID, us(i.CreatedAt))
	return err
}

func (t executionRows) Idempotency(ctx context.Context, wallet string, env crtx.Environment, key string) (crtx.Idempotency, error) {
	i := crtx.Idempotency{Wallet: wallet, Environment: env, Key: key}
	var created int64
	err := t.queryRow(ctx, `SELECT request_hash, execution_id, status, body, created_at FROM idempotency_keys
		WHERE wallet = ? AND environment = ? AND key = ?`, wallet, env, key).Scan(&i.RequestHash, &i.ExecutionID, &i.Status, &i.Body, &created)
	i.CreatedAt = fromUS(created)
	return i, notFound(err, "idempotency key")
}

func (t executionRows) CompleteIdempotency(ctx context.Context, wallet string, env crtx.Environment, key string, status int, body []byte) error {
	_, err := t.exec(ctx, `UPDATE idempotency_keys SET status = ?, body = ? WHERE wallet = ? AND environment = ? AND key = ?`,
		status, body, wallet, env, key)
	return err
}

func (t executionRows) DeleteIdempotency(ctx context.Context, wallet string, env crtx.Environment, key string) error {
	_, err := t.exec(ctx, `DELETE FROM idempotency_keys WHERE wallet = ? AND environment = ? AND key = ?`, wallet, env, key)
	return err
}
