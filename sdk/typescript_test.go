package sdk_test

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// node returns the node command, skipping the test without it (failing in CI).
func node(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is missing; the TypeScript SDK's tests may not be skipped in CI")
		}
		t.Skip("install node (20 or later) to run the TypeScript SDK's tests")
	}
	return path
}

// The TypeScript SDK's own tests (sdk/typescript/test, node --test) run
// against crtxd on 127.0.0.1: a creator wallet with the collateral of three
// listings on mainnet, whose key the tests sign in with to list agents
// written with the SDK, and a caller's devnet API key with funds.
func TestTypeScriptSDK(t *testing.T) {
	nodeCmd := node(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	m := startMarketplace(t, 30*crtx.MicroPerUSDC, 10*crtx.MicroPerUSDC)
	d, creatorSeed, caller := m.d, m.creator.Seed(), m.caller
	key := m.key

	cmd := exec.CommandContext(ctx, nodeCmd, "--test", "--test-concurrency=1", "test/")
	cmd.Dir = "typescript"
	cmd.Env = append(os.Environ(), "CRTX_URL="+d.URL, "CRTX_API_KEY="+key,
		"CRTX_CREATOR_SEED="+hex.EncodeToString(creatorSeed), "CRTX_CALLER_WALLET="+caller)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript SDK's tests failed: %v", err)
	}
	if !strings.Contains(string(out), "# fail 0") || !strings.Contains(string(out), "# skipped 0") {
		t.Errorf("node --test did not run every test without skipping")
	}
}

// npm installs the package from its folder, as the README says (npm
// install ./sdk/typescript), copying what it publishes, and the installed
// package imports with its types.
func TestTypeScriptPackageInstalls(t *testing.T) {
	nodeCmd := node(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is missing")
	}
	dir, err := filepath.Abs("typescript")
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	install := exec.Command(npm, "install", "--offline", "--install-links", "--no-audit", "--no-fund", "--prefix", project, dir)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", dir, err, out)
	}
	for _, f := range []string{"package.json", "index.js", "index.d.ts", "lib/creator.js", "examples/agent.js"} {
		if _, err := os.Stat(filepath.Join(project, "node_modules", "@crtx-market", "sdk", f)); err != nil {
			t.Errorf("the installed package lacks %s: %v", f, err)
		}
	}
	check := exec.Command(nodeCmd, "--input-type=module", "-e",
		`const m = await import('@crtx-market/sdk'); console.log(typeof m.createHandler, typeof m.Client)`)
	check.Dir = project
	out, err := check.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "function function" {
		t.Fatalf("importing the installed package: %v\n%s", err, out)
	}
}
