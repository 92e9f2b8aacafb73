package market

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// WebhookBody makes a webhook's body: the final execution it announces,
// as sent at now. The body is made by the api package (api.WebhookBody).
type WebhookBody func(e crtx.Execution, now time.Time) ([]byte, error)

// RunWebhooks delivers due webhooks every interval until ctx ends, each
// body made by body. A delivery is claimed before it is sent, so replicas
// never send it twice at once; a failure is retried with exponential
// backoff for 24 hours.
func (m *Connectors) RunWebhooks(ctx context.Context, interval time.Duration, body WebhookBody) {
	every(ctx, interval, true, func(ctx context.Context) { m.deliverDue(ctx, body) })
}

func (m *core) deliverDue(ctx context.Context, body WebhookBody) {
	var due []crtx.Webhook
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		now := m.now()
		due, err = tx.Deliveries.ClaimWebhooks(ctx, now, now.Add(time.Minute), now.Add(-crtx.WebhookWindow), 32)
		return err
	})
	if m.failed(ctx, err, "claim webhooks") {
		return
	}
	for _, w := range due {
		m.deliver(ctx, w, body)
	}
}

func (m *core) deliver(ctx context.Context, w crtx.Webhook, body WebhookBody) {
	e, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Execution, error) { return tx.Executions.Execution(ctx, w.ExecutionID) })
	var a attempt
	if err != nil {
		a = attempt{Retry: m.now().Add(m.cfg.WebhookRetryBase), Error: err.Error()}
	} else {
		a = m.sendSigned(ctx, e, w.URL, "msg_"+e.ID, func(now time.Time) ([]byte, error) { return body(e, now) }, nil)
	}
	a.apply(&w.Attempts, &w.NextAt, &w.DeliveredAt, &w.LastError)
	m.recordDelivery(ctx, w)
}

// attempt is how one try at a delivery went: Delivered, or when to try
// again (Retry) and why (Error). An Uncounted try did not reach the
// destination and is not counted among its attempts.
type attempt struct {
	Delivered *time.Time
	Retry     time.Time
	Error     string
	Uncounted bool
}

// apply records a on a delivery's row.
func (a attempt) apply(attempts *int, next *time.Time, delivered **time.Time, lastError *string) {
	switch {
	case a.Delivered != nil:
		*delivered, *lastError = a.Delivered, ""
	default:
		*next = a.Retry
		if a.Error != "" {
			*lastError = a.Error
		}
		if a.Uncounted {
			*attempts--
		}
	}
}

// sendSigned POSTs the body made at the moment of sending to url, about
// execution e, signed with its wallet's webhook secret (and the
// marketplace's key), with the extra headers; it paces a failing
// destination.
func (m *core) sendSigned(ctx context.Context, e crtx.Execution, url, id string, body func(time.Time) ([]byte, error), headers map[string]string) attempt {
	now := m.now()
	// A destination that fails is tried at its own pace, however many of a
	// wallet's executions name it: a cheap execution's webhook is no lever
	// to send another site a flood. The pace is the wallet's, so that one
	// caller's failing hooks never hold up another's at a shared receiver.
	dest := e.Wallet + " " + webhookHost(url)
	if until := m.hooks.blockedUntil(dest); until.After(now) {
		return attempt{Retry: until, Uncounted: true}
	}
	var secrets [][]byte
	if e.Wallet != "" {
		s, err := m.market.Connectors.WebhookSecret(ctx, e.Wallet, e.Environment)
		if err != nil {
			// The marketplace's own failure: tried again soon, without
			// slowing the destination's pace, which is for its failures.
			m.cfg.Logger.Error("webhook secret", "execution_id", e.ID, "err", err)
			return attempt{Retry: now.Add(m.cfg.WebhookRetryBase), Error: "the marketplace could not sign the delivery; it is tried again"}
		}
		secrets = s.Signing(now)
	}
	b, err := body(now)
	if err == nil {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var status int
		status, err = m.cfg.Caller.Deliver(dctx, url, id, e.Environment, b, secrets, headers)
		cancel()
		if err == nil && (status < 200 || status > 299) {
			err = fmt.Errorf("the destination answered HTTP %d", status)
		}
	}
	now = m.now()
	if err != nil {
		return attempt{Retry: m.hooks.failed(dest, now, m.cfg.WebhookRetryBase), Error: err.Error()}
	}
	m.hooks.succeeded(dest)
	return attempt{Delivered: &now}
}

// WebhookSecret is the wallet's webhook signing secret in env, made on its
// first use: by the first delivery of one of its executions there, or its
// first read.
func (m *Connectors) WebhookSecret(ctx context.Context, wallet string, env crtx.Environment) (crtx.WebhookSecret, error) {
	s, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.WebhookSecret, error) { return tx.Deliveries.WebhookSecret(ctx, wallet, env) })
	if !errors.Is(err, crtx.ErrNotFound) {
		return s, err
	}
	err = m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		s, err = m.webhookSecret(ctx, tx, wallet, env)
		return err
	})
	return s, err
}

// RotateWebhookSecret gives the wallet a new webhook secret in env; the
// old one signs deliveries beside it for crtx.WebhookSecretOverlap.
func (m *Connectors) RotateWebhookSecret(ctx context.Context, wallet string, env crtx.Environment) (crtx.WebhookSecret, error) {
	var s crtx.WebhookSecret
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		if s, err = m.webhookSecret(ctx, tx, wallet, env); err != nil {
			return err
		}
		s = s.Rotate(m.now())
		return tx.Deliveries.UpdateWebhookSecret(ctx, s)
	})
	return s, err
}

// webhookSecret reads the wallet's secret, made now if it has none; two
// replicas making one at once keep the first.
func (m *core) webhookSecret(ctx context.Context, tx crtx.Tx, wallet string, env crtx.Environment) (crtx.WebhookSecret, error) {
	if err := tx.Deliveries.InsertWebhookSecret(ctx, crtx.NewWebhookSecret(wallet, env, m.now())); err != nil {
		return crtx.WebhookSecret{}, err
	}
	return tx.Deliveries.WebhookSecret(ctx, wallet, env)
}

func (m *core) recordDelivery(ctx context.Context, w crtx.Webhook) {
	if err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Deliveries.UpdateWebhook(ctx, w) }); err != nil && !errors.Is(err, context.Canceled) {
		m.cfg.Logger.Error("record webhook delivery", "execution_id", w.ExecutionID, "err", err)
	}
}

// webhookHost is the host a URL names, as DNS compares it.
func webhookHost(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	}
	return raw
}

// maxDestinations bounds the failing destinations a process remembers.
const maxDestinations = 10_000

// destinations paces webhook deliveries per destination host in this
// process: after a failure, the host's next try waits a backoff that
// doubles with each failure in a row (up to an hour), shared by every
// delivery to it.
type destinations struct {
	mu    sync.Mutex
	hosts map[string]destination
}

type destination struct {
	failures int
	until    time.Time
}

func (d *destinations) blockedUntil(host string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hosts[host].until
}

func (d *destinations) failed(host string, now time.Time, base time.Duration) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.hosts[host]
	h.failures++
	h.until = now.Add(min(base<<min(h.failures-1, 20), time.Hour))
	if _, ok := d.hosts[host]; !ok && len(d.hosts) >= maxDestinations {
		// Forget the destinations whose wait is over, or else one, rather
		// than grow or forget them all.
		for k, v := range d.hosts {
			if !v.until.After(now) || len(d.hosts) >= maxDestinations {
				delete(d.hosts, k)
			}
			if len(d.hosts) < maxDestinations/2 {
				break
			}
		}
	}
	d.hosts[host] = h
	return h.until
}

func (d *destinations) succeeded(host string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.hosts, host)
}

// WebhookStatus returns the delivery of an execution's webhook.
func (m *Connectors) WebhookStatus(ctx context.Context, executionID string) (crtx.Webhook, error) {
	w, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Webhook, error) { return tx.Deliveries.Webhook(ctx, executionID) })
	return w, err
}
