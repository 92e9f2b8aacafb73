// Package nodetest runs the tests' scripts with node and npm packages
// written elsewhere (the clients that show a protocol working with a
// client not our own), installed by .ci/run. Test code only.
package nodetest

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Script is the command that runs the script testdata/name with node
// and the npm package pkg, which .ci/run installs in the node_modules
// folder the environment variable modules names: a client written
// elsewhere, to show a protocol working with it. vars are added to its
// environment. Without the package or node the test is skipped on a
// developer's machine, and fails in CI.
func Script(ctx context.Context, t *testing.T, modules, pkg, name string, vars ...string) *exec.Cmd {
	t.Helper()
	dir := Modules(t, modules, pkg)
	cmd := Command(ctx, t, name, vars...)
	if err := os.Symlink(dir, filepath.Join(cmd.Dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// Package is an npm package a script imports, from the node_modules
// folder the environment variable modules names.
type Package struct{ Modules, Name string }

// ScriptOf is Script for a script whose packages .ci/run installs
// in several folders: the script's node_modules holds a link to each
// package. Node resolves a linked package's own imports from the folder
// the link points into, so each package keeps the libraries installed
// with it.
func ScriptOf(ctx context.Context, t *testing.T, name string, pkgs []Package, vars ...string) *exec.Cmd {
	t.Helper()
	dirs := make([]string, len(pkgs))
	for i, p := range pkgs {
		dirs[i] = Modules(t, p.Modules, p.Name)
	}
	cmd := Command(ctx, t, name, vars...)
	for i, p := range pkgs {
		link := filepath.Join(cmd.Dir, "node_modules", p.Name)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dirs[i], p.Name), link); err != nil {
			t.Fatal(err)
		}
	}
	return cmd
}

// Modules is the node_modules folder the environment variable modules
// names. Without it, or without node, the test is skipped, or fails in CI.
func Modules(t *testing.T, modules, pkg string) string {
	t.Helper()
	dir := os.Getenv(modules)
	if _, err := exec.LookPath("node"); dir == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set or node is missing; the %s interop test may not be skipped in CI", modules, pkg)
		}
		t.Skipf("set %s to a node_modules folder holding %s (as .ci/run installs it), and install node, to run this test", modules, pkg)
	}
	return dir
}

// Command is the command that runs testdata/name, copied to a folder of
// its own: its imports are resolved from there, as in a project of its
// own (NODE_PATH does not reach ES modules).
func Command(ctx context.Context, t *testing.T, name string, vars ...string) *exec.Cmd {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if err := os.WriteFile(filepath.Join(run, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", name)
	cmd.Dir = run
	cmd.Env = append(os.Environ(), vars...)
	return cmd
}

// Converse runs cmd, a script that talks to the test a line at a time on
// its standard output, each line a word and what follows it: a line whose
// first word is one of words calls its func with the rest of the line,
// and any other line is logged. It fails the test if the script fails, with its
// standard error.
func Converse(t *testing.T, cmd *exec.Cmd, words map[string]func(rest string)) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for lines := bufio.NewScanner(out); lines.Scan(); {
		word, rest, _ := strings.Cut(lines.Text(), " ")
		if f, ok := words[word]; ok {
			f(rest)
		} else {
			t.Logf("%s: %s", filepath.Base(cmd.Args[len(cmd.Args)-1]), lines.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s failed: %v\n%s", cmd.Args, err, stderr.Bytes())
	}
}
