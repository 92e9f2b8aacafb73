package e2e_test

import (
	"context"
	"github.com/crtx-market/crtx/internal/nodetest"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// gate is a channel closed once, by whichever comes first: the client's
// word, or the end of the test.
type gate struct {
	c    chan struct{}
	once sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{c: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.c) }) }

// The official TypeScript MCP SDK lists crtxd's tools and calls each one,
// and runs an agent as a task through tasks/*: e2e/testdata/mcp-client.mjs,
// run with node against the SDK .ci/run installs ($CRTX_MCP_SDK).
func TestMCPTypeScriptSDK(t *testing.T) {
	// One dispatch slot, so that a held execution keeps the next one
	// pending, for tasks/cancel.
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	running, release := newGate(t), newGate(t)
	agent := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		var wait chan struct{}
		switch r.Task {
		case "progress": // answers once the client was told the execution runs
			wait = running.c
		case "hold": // holds the only slot until the client has cancelled the next
			wait = release.c
		}
		if wait != nil && !r.Test {
			select {
			case <-wait:
			case <-ctx.Done():
				return "", 0, ctx.Err()
			}
		}
		return "done: " + r.Task, 1, nil
	}), "0.25", map[string]any{"timeout_seconds": 20})
	t.Cleanup(func() { running.open(); release.open() }) // before the service closes

	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := nodetest.Script(run, t, "CRTX_MCP_SDK", "@modelcontextprotocol/sdk", "mcp-client.mjs",
		"CRTX_URL="+m.d.URL, "CRTX_API_KEY="+m.key.Token(), "CRTX_AGENT_ID="+agent)
	nodetest.Converse(t, cmd, map[string]func(string){"running": func(string) { running.open() }, "release": func(string) { release.open() }})
	// Three runs paid (with progress, as a task, the held one); the
	// cancelled one refunded.
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9.25") || b.Escrowed != 0 {
		t.Errorf("balance %+v, want three runs of 0.25 paid and the cancelled one refunded", b)
	}
}
