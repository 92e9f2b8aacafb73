package surfnet

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Package says what is missing, and how to get it, when Surfnet cannot run:
// no node, no npm to install the package, or a $CRTX_SURFPOOL without it.
func TestPackageSaysWhatIsMissing(t *testing.T) {
	if _, err := PackageName(); err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	fake := func(name string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", bin)
	t.Setenv(Env, "")
	for _, c := range []struct {
		name, env, want string
		tools           []string
	}{
		{"no node", "", "node is not on the PATH: install Node.js", nil},
		{"no npm", "", "installing Surfnet needs npm, which is not on the PATH", []string{"node"}},
		{"npm fails", "", "npm install @solana/surfpool-", []string{"npm"}},
		{"an empty CRTX_SURFPOOL", t.TempDir(), "holds no @solana/surfpool-", nil},
	} {
		for _, tool := range c.tools {
			fake(tool)
		}
		t.Setenv(Env, c.env)
		_, err := Package(context.Background(), io.Discard)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUnavailable saying %q", c.name, err, c.want)
		}
	}
}
