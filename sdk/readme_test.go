package sdk_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
)

// readmeSnippets are the README's programs marked "<!-- runs: LANG -->",
// by language.
func readmeSnippets(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)<!-- runs: (\\w+) -->\n```\\w+\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// The README's agent programs, in Go, Python and TypeScript, run as
// pasted, in a folder of their own as a user's would be (the Go one a
// module of its own that depends on this checkout by replace, as the README
// says), against a real marketplace: each answers the marketplace's signed
// test request with a signed, well-formed result.
func TestREADMESnippetsRun(t *testing.T) {
	snippets := readmeSnippets(t)
	if len(snippets) != 3 {
		t.Fatalf("README snippets: %d, want go, python and typescript", len(snippets))
	}
	m := startMarketplace(t, 10*crtx.MicroPerUSDC, crtx.MicroPerUSDC)
	creator, _, err := client.New(m.d.URL, "").SignIn(context.Background(), m.creator)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lang, file, port string
		prepare          func(t *testing.T, dir string) []string // the command that runs it
	}{
		{"go", "main.go", "9103", func(t *testing.T, dir string) []string {
			run(t, dir, "go", "mod", "init", "myagent")
			run(t, dir, "go", "mod", "edit", "-require", "github.com/crtx-market/crtx@v0.0.0", "-replace", "github.com/crtx-market/crtx="+root)
			run(t, dir, "go", "mod", "tidy")
			run(t, dir, "go", "build", "-o", "agent", ".")
			return []string{filepath.Join(dir, "agent")}
		}},
		{"python", "agent.py", "9104", func(t *testing.T, dir string) []string {
			py := python()
			if py == "" {
				requireInCI(t, "python3 with the cryptography package")
			}
			return []string{py, "agent.py"}
		}},
		{"typescript", "agent.mjs", "9105", func(t *testing.T, dir string) []string {
			if _, err := exec.LookPath("node"); err != nil {
				requireInCI(t, "node")
			}
			// What npm install ./sdk/typescript leaves: a link to the package.
			if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@crtx-market"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(root, "sdk", "typescript"), filepath.Join(dir, "node_modules", "@crtx-market", "sdk")); err != nil {
				t.Fatal(err)
			}
			_, key, _ := ed25519.GenerateKey(nil)
			if err := keyfile.Write(filepath.Join(dir, "agent-key.json"), key); err != nil {
				t.Fatal(err)
			}
			return []string{"node", "agent.mjs"}
		}},
	} {
		t.Run(c.lang, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, c.file), []byte(snippets[c.lang]), 0o644); err != nil {
				t.Fatal(err)
			}
			argv := c.prepare(t, dir)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CRTX_URL="+m.d.URL, "PYTHONPATH="+filepath.Join(root, "sdk", "python"), "PYTHONDONTWRITEBYTECODE=1")
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cancel(); cmd.Wait() }()
			lines := make(chan string)
			go func() {
				s := bufio.NewScanner(stdout)
				for s.Scan() {
					select {
					case lines <- s.Text():
					case <-ctx.Done():
						return
					}
				}
				close(lines)
			}()
			var pub string
			select {
			case l := <-lines:
				pub, _ = strings.CutPrefix(l, "signing_public_key ")
			case <-time.After(time.Minute):
				t.Fatal("the program printed no signing_public_key within a minute")
			}
			endpoint := "http://127.0.0.1:" + c.port + "/execute"
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				r, err := creator.TestExecution(context.Background(), endpoint, pub)
				if err == nil && r.Reachable && r.ShapeOK && r.SignatureOK && r.Status == "completed" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the marketplace's test of %s: %+v %v", endpoint, r, err)
				}
			}
		})
	}
}

// run runs a command in dir; it must succeed.
func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// requireInCI skips the test on a developer's machine without what, and
// fails it in CI.
func requireInCI(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI", what)
	}
	t.Skipf("no %s", what)
}
