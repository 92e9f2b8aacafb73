package a2a

import (
	"context"
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
)

// Push notifications (A2A v1.0 §9): a task's configs name URLs that are
// POSTed the task, as a StreamResponse, once it has ended, with the
// config's token as A2A-Notification-Token and its credentials as
// Authorization, through the webhooks' address checks and signed as
// webhooks are (webhook-signature, with the wallet's secret). The
// market keeps and delivers them (market/push.go).

func fromPushConfig(c *a2a.PushConfig) crtx.PushConfig {
	p := crtx.PushConfig{TaskID: string(c.TaskID), ID: c.ID, URL: c.URL, Token: c.Token}
	if c.Auth != nil {
		p.AuthScheme, p.AuthCredentials = c.Auth.Scheme, c.Auth.Credentials
	}
	return p
}

// toPushConfig is a stored config as A2A shows it: its credentials are not
// read back, as a webhook secret is not.
func toPushConfig(p crtx.PushConfig) *a2a.PushConfig {
	c := &a2a.PushConfig{TaskID: a2a.TaskID(p.TaskID), ID: p.ID, URL: p.URL, Token: p.Token}
	if p.AuthScheme != "" {
		c.Auth = &a2a.PushAuthInfo{Scheme: p.AuthScheme}
	}
	return c
}

// CreateTaskPushConfig sets a config of one of the caller's tasks.
func (t *tasks) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	c, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	if _, _, err := t.own(ctx, c, string(req.TaskID)); err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	p, err := t.m.Connectors.SetPushConfig(ctx, c.principal, fromPushConfig(req))
	if err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	return toPushConfig(p), nil
}

// GetTaskPushConfig reads one config of one of the caller's tasks.
func (t *tasks) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	cs, err := t.pushConfigs(ctx, req.TaskID, req.ID)
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

// ListTaskPushConfigs lists the configs of one of the caller's tasks; a
// task has few (crtx.MaxPushConfigs), so they come in one page.
func (t *tasks) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	cs, err := t.pushConfigs(ctx, req.TaskID, "")
	if err != nil {
		return nil, err
	}
	return &a2a.ListTaskPushConfigResponse{Configs: cs}, nil
}

func (t *tasks) pushConfigs(ctx context.Context, task a2a.TaskID, id string) ([]*a2a.PushConfig, error) {
	c, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	if _, _, err := t.own(ctx, c, string(task)); err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	ps, err := t.m.Connectors.PushConfigs(ctx, c.principal, string(task), id)
	if err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	out := make([]*a2a.PushConfig, len(ps))
	for i, p := range ps {
		out[i] = toPushConfig(p)
	}
	return out, nil
}

// DeleteTaskPushConfig deletes one config of one of the caller's tasks.
func (t *tasks) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	c, err := callFrom(ctx)
	if err != nil {
		return err
	}
	if _, _, err := t.own(ctx, c, string(req.TaskID)); err != nil {
		return t.protocolError(ctx, c, err)
	}
	if err := t.m.Connectors.DeletePushConfig(ctx, c.principal, string(req.TaskID), req.ID); err != nil {
		return t.protocolError(ctx, c, err)
	}
	return nil
}

// PushBody is what a push carries: the ended task, with its result, as a
// StreamResponse, the form A2A clients read pushes in.
func PushBody(m *market.Market) market.PushBody {
	s := &server{m: m, publicURL: m.Config().PublicURL}
	return func(e crtx.Execution, result string) ([]byte, error) {
		return json.Marshal(a2a.StreamResponse{Event: s.task(e, result, "", true)})
	}
}
