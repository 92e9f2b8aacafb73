package sqldb

import (
	"context"
	"database/sql"
	"time"

	"github.com/crtx-market/crtx"
)

const pushColumns = `task_id, id, wallet, url, token, auth_scheme, auth_credentials, created_at, attempts, next_at, delivered_at, last_error`

func scanPush(row interface{ Scan(...any) error }) (crtx.PushConfig, error) {
	var p crtx.PushConfig
	var created, next int64
	var delivered sql.NullInt64
	err := row.Scan(&p.TaskID, &p.ID, &p.Wallet, &p.URL, &p.Token, &p.AuthScheme, &p.AuthCredentials, &created, &p.Attempts, &next, &delivered, &p.LastError)
	p.CreatedAt, p.NextAt, p.DeliveredAt = fromUS(created), fromUS(next), fromNullUS(delivered)
	return p, err
}

func (t deliveryRows) PutPushConfig(ctx context.Context, p crtx.PushConfig) error {
	_, err := t.exec(ctx, `INSERT INTO a2a_push_configs (`+pushColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL, '')
		ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token, auth_scheme = excluded.auth_scheme,
		auth_credentials = excluded.auth_credentials, created_at = excluded.created_at, attempts = 0, next_at = excluded.next_at,
		delivered_at = NULL, last_error = ''`,
		p.TaskID, p.ID, p.Wallet, p.URL, p.Token, p.AuthScheme, p.AuthCredentials, us(p.CreatedAt), us(p.NextAt))
	return err
}

func (t deliveryRows) PushConfig(ctx context.Context, taskID, id string) (crtx.PushConfig, error) {
	p, err := scanPush(t.queryRow(ctx, `SELECT `+pushColumns+` FROM a2a_push_configs WHERE task_id = ? AND id = ?`, taskID, id))
	return p, notFound(err, "push config")
}

func (t deliveryRows) PushConfigs(ctx context.Context, taskID string) ([]crtx.PushConfig, error) {
	rows, err := t.query(ctx, `SELECT `+pushColumns+` FROM a2a_push_configs WHERE task_id = ? ORDER BY created_at, id`, taskID)
	return collect(rows, err, scanPush)
}

func (t deliveryRows) DeletePushConfig(ctx context.Context, taskID, id string) error {
	r, err := t.exec(ctx, `DELETE FROM a2a_push_configs WHERE task_id = ? AND id = ?`, taskID, id)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return notFound(sql.ErrNoRows, "push config")
	}
	return nil
}

// ClaimPushes is ClaimWebhooks for push configs whose task has ended. The
// execution is read in a subquery, so that on PostgreSQL only the push
// rows are locked, never an execution a worker is closing.
func (t deliveryRows) ClaimPushes(ctx context.Context, now, until, since time.Time, limit int) ([]crtx.PushConfig, error) {
	rows, err := t.query(ctx, `SELECT `+pushColumns+` FROM a2a_push_configs p
		WHERE delivered_at IS NULL AND next_at <= ? AND created_at > ?
		AND EXISTS (SELECT 1 FROM executions e WHERE e.id = p.task_id AND e.status IN ('completed', 'failed', 'disputed'))
		ORDER BY next_at LIMIT ?`+t.d.SkipLocked(), us(now), us(since), limit)
	out, err := collect(rows, err, scanPush)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Attempts++
		out[i].NextAt = until
		if err := t.UpdatePush(ctx, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdatePush records a delivery's progress on the config it was claimed
// as: one replaced since (a new created_at) is left alone, to be delivered
// anew. A delivered config's token and credentials are erased: they were
// for that one delivery.
func (t deliveryRows) UpdatePush(ctx context.Context, p crtx.PushConfig) error {
	_, err := t.exec(ctx, `UPDATE a2a_push_configs SET attempts = ?, next_at = ?, delivered_at = ?, last_error = ?,
		token = CASE WHEN ? THEN '' ELSE token END, auth_credentials = CASE WHEN ? THEN '' ELSE auth_credentials END
		WHERE task_id = ? AND id = ? AND created_at = ?`,
		p.Attempts, us(p.NextAt), nullUS(p.DeliveredAt), p.LastError, p.DeliveredAt != nil, p.DeliveredAt != nil, p.TaskID, p.ID, us(p.CreatedAt))
	return err
}
