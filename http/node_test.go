package http_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeScript is the command that runs the script testdata/name with node
// and the npm package pkg, which .ci/run installs in the node_modules
// folder the environment variable modules names: a client written
// elsewhere, to show a protocol working with it. vars are added to its
// environment. Without the package or node the test is skipped on a
// developer's machine, and fails in CI.
func nodeScript(ctx context.Context, t *testing.T, modules, pkg, name string, vars ...string) *exec.Cmd {
	t.Helper()
	dir := os.Getenv(modules)
	if _, err := exec.LookPath("node"); dir == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set or node is missing; the %s interop test may not be skipped in CI", modules, pkg)
		}
		t.Skipf("set %s to a node_modules folder holding %s (as .ci/run installs it), and install node, to run this test", modules, pkg)
	}
	// The script's imports are resolved from its own folder, as in a
	// project of its own (NODE_PATH does not reach ES modules).
	script, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if err := os.WriteFile(filepath.Join(run, name), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(run, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", name)
	cmd.Dir = run
	cmd.Env = append(os.Environ(), vars...)
	return cmd
}
