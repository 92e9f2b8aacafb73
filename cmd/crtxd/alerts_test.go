package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The alerting rules in deploy/ are valid Prometheus rules, each fires on
// the series that should raise it and not before (deploy/alerts_test.yml,
// run by promtool), and every crtx metric they read is one crtxd exports.
func TestAlertRules(t *testing.T) {
	promtool := needs(t, "promtool", "prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../deploy"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	rules, err := os.ReadFile("../../deploy/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../http/*.go")
	var exported strings.Builder
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			b, _ := os.ReadFile(f)
			exported.Write(b)
		}
	}
	for _, name := range regexp.MustCompile(`crtx_[a-z0-9_]+`).FindAllString(string(rules), -1) {
		if !strings.Contains(exported.String(), `"`+name+`"`) {
			t.Errorf("the rules read %s, which crtxd does not export", name)
		}
	}
}

// needs finds tool, which Debian's package installs: a test that runs it
// is skipped without it on a developer's machine, and fails in CI, where
// .ci/run installs it.
func needs(t *testing.T, tool, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing, and its test may not be skipped in CI (.ci/run installs Debian's %s)", tool, pkg)
		}
		t.Skipf("%s (Debian's %s package) is not installed", tool, pkg)
	}
	return path
}
