package market

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// A2A push notifications: a caller gives a task (an execution) URLs to be
// told at when it ends. Each config's row is its delivery too, claimed and
// retried like a webhook, through the same address checks and with the
// same signatures; the body is made by the A2A package (PushBody).

// PushBody makes a push's body: the ended task as A2A has it.
type PushBody func(e crtx.Execution, result string) ([]byte, error)

// SetPushConfig stores a push config for one of p's executions, replacing
// one of the same id. An execution that has ended already is pushed at
// once.
func (m *Connectors) SetPushConfig(ctx context.Context, p crtx.Principal, c crtx.PushConfig) (crtx.PushConfig, error) {
	e, _, err := m.market.Executions.GetExecution(ctx, p, c.TaskID)
	if err != nil {
		return c, err
	}
	if c.ID == "" {
		c.ID = crtx.NewID("push_")
	}
	if err := m.CheckPushConfig(ctx, c); err != nil {
		return c, err
	}
	now := m.now()
	c.Wallet, c.CreatedAt, c.NextAt = e.Wallet, now, now
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		have, err := tx.Deliveries.PushConfigs(ctx, c.TaskID)
		if err != nil {
			return err
		}
		if len(have) >= crtx.MaxPushConfigs && !hasPushConfig(have, c.ID) {
			return crtx.Errorf(crtx.CodeInvalidRequest, "a task takes at most %d push configs; delete one first", crtx.MaxPushConfigs)
		}
		return tx.Deliveries.PutPushConfig(ctx, c)
	})
	return c, internal("set push config", err)
}

// CheckPushConfig checks what a client sets in a push config, its URL as
// a webhook's is.
func (m *Connectors) CheckPushConfig(ctx context.Context, c crtx.PushConfig) error {
	if err := crtx.CheckPushConfig(c); err != nil {
		return err
	}
	return m.cfg.Caller.CheckURL(ctx, "url", c.URL)
}

func hasPushConfig(cs []crtx.PushConfig, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}

// PushConfigs lists the push configs of one of p's executions; id, when
// given, picks one (not found if it does not exist).
func (m *Connectors) PushConfigs(ctx context.Context, p crtx.Principal, taskID, id string) ([]crtx.PushConfig, error) {
	if _, _, err := m.market.Executions.GetExecution(ctx, p, taskID); err != nil {
		return nil, err
	}
	cs, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.PushConfig, error) {
		if id == "" {
			return tx.Deliveries.PushConfigs(ctx, taskID)
		}
		c, err := tx.Deliveries.PushConfig(ctx, taskID, id)
		return []crtx.PushConfig{c}, err
	})
	if errors.Is(err, crtx.ErrNotFound) {
		return nil, crtx.Errorf(crtx.CodeNotFound, "task %s has no push config %q", taskID, id)
	}
	return cs, internal("push configs", err)
}

// DeletePushConfig deletes one of the push configs of one of p's
// executions.
func (m *Connectors) DeletePushConfig(ctx context.Context, p crtx.Principal, taskID, id string) error {
	if _, _, err := m.market.Executions.GetExecution(ctx, p, taskID); err != nil {
		return err
	}
	err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Deliveries.DeletePushConfig(ctx, taskID, id) })
	if errors.Is(err, crtx.ErrNotFound) {
		return crtx.Errorf(crtx.CodeNotFound, "task %s has no push config %q", taskID, id)
	}
	return internal("delete push config", err)
}

// RunPushes delivers the pushes of ended tasks every interval until ctx
// ends, each body made by body.
func (m *Connectors) RunPushes(ctx context.Context, interval time.Duration, body PushBody) {
	every(ctx, interval, true, func(ctx context.Context) { m.pushDue(ctx, body) })
}

func (m *core) pushDue(ctx context.Context, body PushBody) {
	var due []crtx.PushConfig
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		now := m.now()
		due, err = tx.Deliveries.ClaimPushes(ctx, now, now.Add(time.Minute), now.Add(-crtx.WebhookWindow), 16)
		return err
	})
	if m.failed(ctx, err, "claim pushes") {
		return
	}
	// At once, not one after another: a batch of slow destinations then
	// takes one delivery's timeout, well within the claim's minute, and no
	// other replica takes a push up again while it is being sent.
	var wg sync.WaitGroup
	for _, c := range due {
		wg.Go(func() { m.push(ctx, c, body) })
	}
	wg.Wait()
}

func (m *core) push(ctx context.Context, c crtx.PushConfig, body PushBody) {
	var e crtx.Execution
	var result string
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		if e, err = tx.Executions.Execution(ctx, c.TaskID); err != nil {
			return err
		}
		result, err = details(ctx, tx, &e)
		return err
	})
	var a attempt
	if err != nil {
		a = attempt{Retry: m.now().Add(m.cfg.WebhookRetryBase), Error: err.Error()}
	} else {
		headers := map[string]string{}
		if c.Token != "" {
			headers["A2A-Notification-Token"] = c.Token
		}
		if c.AuthCredentials != "" {
			headers["Authorization"] = pushScheme(c.AuthScheme) + " " + c.AuthCredentials
		}
		a = m.sendSigned(ctx, e, c.URL, "msg_"+e.ID+"_"+c.ID, func(time.Time) ([]byte, error) { return body(e, result) }, headers)
	}
	a.apply(&c.Attempts, &c.NextAt, &c.DeliveredAt, &c.LastError)
	if err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Deliveries.UpdatePush(ctx, c) }); err != nil && !errors.Is(err, context.Canceled) {
		m.cfg.Logger.Error("record push", "execution_id", c.TaskID, "err", err)
	}
}

// pushScheme is an authentication scheme as HTTP writes it.
func pushScheme(s string) string {
	if strings.EqualFold(s, "basic") {
		return "Basic"
	}
	return "Bearer"
}
