package sqldb

import (
	"context"
	"database/sql"
	"time"

	"github.com/crtx-market/crtx"
)

func (t deliveryRows) InsertWebhook(ctx context.Context, w crtx.Webhook) error {
	_, err := t.exec(ctx, `INSERT INTO webhook_deliveries (execution_id, url, next_at, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (execution_id) DO NOTHING`, w.ExecutionID, w.URL, us(w.NextAt), us(w.CreatedAt))
	return err
}

func scanWebhook(row interface{ Scan(...any) error }) (crtx.Webhook, error) {
	var w crtx.Webhook
	var next, created int64
	var delivered sql.NullInt64
	err := row.Scan(&w.ExecutionID, &w.URL, &w.Attempts, &next, &delivered, &w.LastError, &created)
	w.NextAt, w.CreatedAt, w.DeliveredAt = fromUS(next), fromUS(created), fromNullUS(delivered)
	return w, err
}

func (t deliveryRows) ClaimWebhooks(ctx context.Context, now, until, since time.Time, limit int) ([]crtx.Webhook, error) {
	rows, err := t.query(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries
		WHERE delivered_at IS NULL AND next_at <= ? AND created_at > ? ORDER BY next_at LIMIT ?`+t.d.SkipLocked(), us(now), us(since), limit)
	out, err := collect(rows, err, scanWebhook)
	if err != nil {
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

func (t deliveryRows) UpdateWebhook(ctx context.Context, w crtx.Webhook) error {
	_, err := t.exec(ctx, `UPDATE webhook_deliveries SET attempts = ?, next_at = ?, delivered_at = ?, last_error = ? WHERE execution_id = ?`,
		w.Attempts, us(w.NextAt), nullUS(w.DeliveredAt), w.LastError, w.ExecutionID)
	return err
}

func (t deliveryRows) Webhook(ctx context.Context, executionID string) (crtx.Webhook, error) {
	w, err := scanWebhook(t.queryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries WHERE execution_id = ?`, executionID))
	return w, notFound(err, "webhook")
}

func (t deliveryRows) InsertWebhookSecret(ctx context.Context, s crtx.WebhookSecret) error {
	_, err := t.exec(ctx, `INSERT INTO webhook_secrets (wallet, environment, secret, previous, previous_until, rotated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (wallet, environment) DO NOTHING`, s.Wallet, s.Environment, s.Key, s.Previous, us(s.PreviousUntil), us(s.RotatedAt))
	return err
}

func (t deliveryRows) WebhookSecret(ctx context.Context, wallet string, env crtx.Environment) (crtx.WebhookSecret, error) {
	s := crtx.WebhookSecret{Wallet: wallet, Environment: env}
	var until, rotated int64
	err := t.queryRow(ctx, `SELECT secret, previous, previous_until, rotated_at FROM webhook_secrets WHERE wallet = ? AND environment = ?`, wallet, env).
		Scan(&s.Key, &s.Previous, &until, &rotated)
	s.PreviousUntil, s.RotatedAt = fromUS(until), fromUS(rotated)
	return s, notFound(err, "webhook secret")
}

func (t deliveryRows) UpdateWebhookSecret(ctx context.Context, s crtx.WebhookSecret) error {
	_, err := t.exec(ctx, `UPDATE webhook_secrets SET secret = ?, previous = ?, previous_until = ?, rotated_at = ? WHERE wallet = ? AND environment = ?`,
		s.Key, s.Previous, us(s.PreviousUntil), us(s.RotatedAt), s.Wallet, s.Environment)
	return err
}
