package surfnet

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Package says what is missing, and how to get it, when Surfnet cannot run:
// no node, no npm to install the package, or a $CRTX_SURFPOOL without it.
func TestPackageSaysWhatIsMissing(t *testing.T) {
	if _, err := PackageName(); err != nil {
		t.Skip(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct {
		name, env, want string
		tools           []string
	}{
		{"no node", "", "node is not on the PATH: install Node.js", nil},
		{"no npm", "", "installing Surfnet needs npm, which is not on the PATH", []string{"node"}},
		{"npm fails", "", "npm install @solana/surfpool-", []string{"node", "npm"}},
		{"an empty CRTX_SURFPOOL", t.TempDir(), "holds no @solana/surfpool-", []string{"node"}},
	} {
		// Each case has the tools it names, and no other: fakes that fail.
		bin := t.TempDir()
		for _, tool := range c.tools {
			if err := os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("PATH", bin)
		t.Setenv(Env, c.env)
		_, err := Package(context.Background(), io.Discard)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUnavailable saying %q", c.name, err, c.want)
		}
	}
	// A failed install leaves nothing a later run would take for whole.
	if entries, _ := os.ReadDir(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "crtx")); len(entries) != 0 {
		t.Errorf("the cache after failed installs: %v", entries)
	}
}

// Start says so when node cannot run Surfnet, and leaves nothing running.
func TestStartFailsCleanly(t *testing.T) {
	if _, err := PackageName(); err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	for name, script := range map[string]string{"exits": "exit 3", "prints junk": "echo not json; sleep 60"} {
		if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		if _, err := Start(context.Background(), t.TempDir(), 20*time.Millisecond, io.Discard); !errors.Is(err, ErrUnavailable) {
			t.Errorf("node that %s: %v, want ErrUnavailable", name, err)
		}
	}
}

// Without CRTX_SURFPOOL, Package installs Surfnet with npm into the user's
// cache the first time, and a network starts from it; the second time it
// finds it there. It downloads the package (about 45 MB): it runs in CI,
// where npm's registry is reachable, and on a developer's machine only with
// CRTX_TEST_NPM set.
func TestPackageInstallsWithNpm(t *testing.T) {
	if os.Getenv("CI") == "" && os.Getenv("CRTX_TEST_NPM") == "" {
		t.Skip("set CRTX_TEST_NPM to install Surfnet from npm's registry in this test")
	}
	if _, err := PackageName(); err != nil {
		t.Skip(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", t.TempDir())
	t.Setenv(Env, "")
	var log strings.Builder
	modules, err := Package(context.Background(), &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.HasPrefix(modules, cache) || !strings.Contains(log.String(), "installing @solana/surfpool-") {
		t.Errorf("installed into %s, saying %q", modules, log.String())
	}
	net, err := Start(context.Background(), modules, 20*time.Millisecond, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	net.Stop()
	log.Reset()
	if again, err := Package(context.Background(), &log); err != nil || again != modules || log.Len() != 0 {
		t.Errorf("the second time: %s, %v, saying %q", again, err, log.String())
	}
}
