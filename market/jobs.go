package market

import (
	"context"
	"time"
)

// every runs fn every interval until ctx ends, and once at the start when
// atOnce: the loop of each background job (the sealer, the roll-up,
// recovery, webhooks, collateral releases, the heartbeat).
func every(ctx context.Context, interval time.Duration, atOnce bool, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if atOnce {
			fn(ctx)
		}
		atOnce = true
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// failed reports whether a step of a background job failed, and logs why
// unless the job is stopping (its ctx ended), when steps fail by design.
func (m *core) failed(ctx context.Context, err error, what string, attrs ...any) bool {
	if err != nil && ctx.Err() == nil {
		m.cfg.Logger.Error(what, append(attrs, "err", err)...)
	}
	return err != nil
}
