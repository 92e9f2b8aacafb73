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
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing, and the alerting rules may not go unchecked in CI (.ci/run installs Debian's prometheus)")
		}
		t.Skip("promtool (Debian's prometheus package) checks the alerting rules")
	}
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
