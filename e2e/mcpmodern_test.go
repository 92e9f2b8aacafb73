package e2e_test

import (
	"context"
	"github.com/crtx-market/crtx/internal/nodetest"
	"os"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// replica starts a second crtxd on the store of e when that store is
// PostgreSQL, as a deployment of several replicas behind a load balancer
// runs, and returns its URL; on SQLite, which one process serves, it
// returns e's own.
func (e *env) replica() string {
	e.t.Helper()
	if os.Getenv("CRTX_TEST_ENGINE") != "postgres" {
		return e.d.URL
	}
	cfg := e.cfg
	cfg.Addr, cfg.PublicURL = "127.0.0.1:0", ""
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := d.Close(); err != nil {
			e.t.Errorf("replica close: %v", err)
		}
	})
	return d.URL
}

// The official TypeScript SDK's client of protocol 2026-07-28, with the
// official Tasks extension's requester, discovers crtxd, calls its tools,
// runs an agent as a task and again with the same idempotency key, and
// cancels a pending task (e2e/testdata/mcp-modern.mjs); on PostgreSQL its
// task traffic goes to a second replica. Three runs are paid, the retry
// not again, the cancelled one refunded.
func TestMCPModernSDK(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	release := newGate(t)
	agent := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		if r.Task == "hold" && !r.Test {
			select {
			case <-release.c:
			case <-ctx.Done():
				return "", 0, ctx.Err()
			}
		}
		return "done: " + r.Task, 1, nil
	}), "0.25", map[string]any{"timeout_seconds": 20})
	t.Cleanup(release.open) // before the service closes
	second := m.replica()

	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := nodetest.ScriptOf(run, t, "mcp-modern.mjs", []nodetest.Package{
		{Modules: "CRTX_MCP_CLIENT", Name: "@modelcontextprotocol/client"}, {Modules: "CRTX_MCP_CLIENT", Name: "@modelcontextprotocol/ext-tasks"}},
		"CRTX_URL="+m.d.URL, "CRTX_URL2="+second, "CRTX_API_KEY="+m.key.Token(), "CRTX_AGENT_ID="+agent)
	done := false
	nodetest.Converse(t, cmd, map[string]func(string){"release": func(string) { release.open() }, "done": func(string) { done = true }})
	if !done {
		t.Fatal("the 2026-07-28 MCP client stopped before its end")
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9.25") || b.Escrowed != 0 {
		t.Errorf("balance %+v, want three runs of 0.25 paid, the retry not again, the cancelled one refunded", b)
	}
}
