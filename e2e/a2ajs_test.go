package e2e_test

import (
	"context"
	"github.com/crtx-market/crtx/internal/nodetest"
	"testing"

	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// A client written with the official JavaScript A2A SDK resolves a card,
// verifies its signature with the SDK's verifier, sends and streams a message on both
// bindings and reads the task back, and cancels a task waiting for
// dispatch (testdata/a2a-client.mjs holds the steps and their checks).
// The SDK comes from npm: $CRTX_A2A_SDK is the node_modules directory
// holding @a2a-js/sdk, which .ci/run installs at a pinned version.
func TestA2AJavaScriptSDK(t *testing.T) {
	// One dispatch at a time: the waiting agent's first task holds it, so
	// the second stays submitted until it is cancelled.
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	agent := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		return "did " + r.Task + " with " + string(r.Parameters), 5, nil
	}), "0.05")
	release := make(chan struct{})
	waiting := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return "held " + r.Task, 1, nil
	}), "0.05")
	// Released before the servers close (cleanups run last first).
	t.Cleanup(func() { close(release) })

	cmd := nodetest.Script(context.Background(), t, "CRTX_A2A_SDK", "@a2a-js/sdk", "a2a-client.mjs",
		"CRTX_URL="+m.d.URL, "CRTX_API_KEY="+m.key.Token(), "CRTX_AGENT="+agent, "CRTX_WAITING_AGENT="+waiting)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the A2A SDK client failed: %v", err)
	}
}
