package crtx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Webhook is the delivery of an execution's final record to its webhook_url.
type Webhook struct {
	ExecutionID string
	URL         string
	Attempts    int
	NextAt      time.Time
	DeliveredAt *time.Time
	LastError   string
	CreatedAt   time.Time
}

// WebhookWindow is how long a delivery is retried (CONTRACT §8).
const WebhookWindow = 24 * time.Hour

// RunWebhooks delivers due webhooks every interval until ctx ends. A
// delivery is claimed before it is sent, so replicas never send it twice at
// once; a failure is retried with exponential backoff for 24 hours.
func (m *Market) RunWebhooks(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		m.deliverDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *Market) deliverDue(ctx context.Context) {
	var due []Webhook
	err := m.store.Update(ctx, func(tx Tx) (err error) {
		now := m.now()
		due, err = tx.ClaimWebhooks(ctx, now, now.Add(time.Minute), now.Add(-WebhookWindow), 32)
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			m.cfg.Logger.Error("claim webhooks", "err", err)
		}
		return
	}
	for _, w := range due {
		m.deliver(ctx, w)
	}
}

func (m *Market) deliver(ctx context.Context, w Webhook) {
	var e Execution
	var result string
	err := m.store.View(ctx, func(tx Tx) (err error) {
		if e, err = tx.Execution(ctx, w.ExecutionID); err != nil || e.ResultCID == "" {
			return err
		}
		result, err = tx.Result(ctx, e.ResultCID)
		return err
	})
	if err == nil {
		body, _ := json.Marshal(m.Record(e, result))
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var status int
		status, err = m.cfg.Caller.Deliver(dctx, w.URL, e.Environment, body)
		cancel()
		if err == nil && (status < 200 || status > 299) {
			err = fmt.Errorf("the webhook answered HTTP %d", status)
		}
	}
	now := m.now()
	if err == nil {
		w.DeliveredAt, w.LastError = &now, ""
	} else {
		w.LastError = err.Error()
		w.NextAt = now.Add(min(m.cfg.WebhookRetryBase<<min(w.Attempts-1, 20), time.Hour))
	}
	if uerr := m.store.Update(ctx, func(tx Tx) error { return tx.UpdateWebhook(ctx, w) }); uerr != nil && !errors.Is(uerr, context.Canceled) {
		m.cfg.Logger.Error("record webhook delivery", "execution_id", w.ExecutionID, "err", uerr)
	}
}

// WebhookStatus returns the delivery of an execution's webhook.
func (m *Market) WebhookStatus(ctx context.Context, executionID string) (Webhook, error) {
	var w Webhook
	err := m.store.View(ctx, func(tx Tx) (err error) {
		w, err = tx.Webhook(ctx, executionID)
		return err
	})
	return w, err
}
