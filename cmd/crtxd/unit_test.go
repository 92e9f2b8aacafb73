package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx/store/storetest"
)

// deployUnit returns the lines of the systemd unit in docs/deploy.md.
func deployUnit(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, unit, ok := strings.Cut(string(doc), "```ini\n")
	unit, _, _ = strings.Cut(unit, "```")
	if !ok {
		t.Fatal("docs/deploy.md has no systemd unit")
	}
	return strings.Split(unit, "\n")
}

// readOnly runs crtxd with args where dir is mounted read-only, as the
// unit's ReadOnlyPaths= mounts it, in a mount namespace of its own.
func readOnly(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("unshare -m: %v: CI must run the unit's test as root", err)
		}
		t.Skipf("mounting a folder read-only needs root (unshare -m): %v", err)
	}
	cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", `mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"`, dir, crtxdBinary(t)}, args...)...)
	cmd.Env = env
	return cmd
}

// The unit in docs/deploy.md runs as written, with its data folder
// read-only: after crtxd init, the first start writes nothing there and
// serves, with the settings of the environment file each host keeps;
// without it, the start fails and says to run crtxd init. init never
// replaces a key.
func TestTheUnitsFirstStart(t *testing.T) {
	etc := t.TempDir() // the unit's /etc/crtx
	db := storetest.SchemaDSN(t)
	addr, metrics := freePort(t), freePort(t)
	env := []string{"PATH=" + os.Getenv("PATH")}
	var readOnlyPaths string
	for _, line := range deployUnit(t) {
		line = strings.ReplaceAll(line, "/etc/crtx", etc)
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			name, _, _ := strings.Cut(v, "=")
			switch name {
			case "CRTX_DB":
				v = name + "=" + db
			case "CRTX_ADDR":
				v = name + "=" + addr
			}
			env = append(env, v)
		}
		if v, ok := strings.CutPrefix(line, "EnvironmentFile=-"); ok {
			// Each host's own file: here the private metrics address the
			// unit's comment gives as the example.
			if err := os.WriteFile(v, []byte("CRTX_METRICS_ADDR="+metrics+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(v)
			env = append(env, strings.Fields(string(b))...)
		}
		if v, ok := strings.CutPrefix(line, "ReadOnlyPaths="); ok {
			readOnlyPaths = v
		}
	}
	if readOnlyPaths != etc {
		t.Fatalf("the unit's ReadOnlyPaths is %q, not its data folder", readOnlyPaths)
	}
	if err := os.WriteFile(filepath.Join(etc, "admin-token"), []byte("unit-test-admin-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Without the keys: refused, and told how to make them.
	out, err := readOnly(t, etc, env, "serve").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("crtxd init --data "+etc)) {
		t.Fatalf("the first start without keys: %v\n%s", err, out)
	}

	// Step 1 of docs/deploy.md, as written there.
	doc, _ := os.ReadFile("../../docs/deploy.md")
	_, step, _ := strings.Cut(string(doc), "## 1. ")
	_, block, ok := strings.Cut(step, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !strings.Contains(block, "crtxd init") {
		t.Fatal("docs/deploy.md's step 1 has no commands")
	}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(line, "/etc/crtx", etc))
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(crtxdBinary(t))+":"+os.Getenv("PATH"), "CRTX_DB="+db)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	key, _ := os.ReadFile(filepath.Join(etc, "marketplace.json"))
	if out, err := exec.Command(crtxdBinary(t), "init", "--data", etc).CombinedOutput(); err == nil || !bytes.Contains(out, []byte("never replaced")) {
		t.Errorf("crtxd init a second time: %v\n%s", err, out)
	}
	if again, _ := os.ReadFile(filepath.Join(etc, "marketplace.json")); !bytes.Equal(key, again) {
		t.Error("crtxd init replaced a key")
	}

	serve := readOnly(t, etc, env, "serve")
	var log bytes.Buffer
	serve.Stdout, serve.Stderr = &log, &log
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	ready := func(url string) bool {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if r, err := http.Get(url); err == nil {
				r.Body.Close()
				if r.StatusCode == http.StatusOK {
					return true
				}
			}
		}
		return false
	}
	if !ready("http://"+addr+"/readyz") || !ready("http://"+metrics+"/metrics") {
		serve.Process.Kill()
		serve.Wait()
		t.Fatalf("the unit's crtxd did not serve on %s with metrics on %s:\n%s", addr, metrics, log.String())
	}

	serve.Process.Kill()
	serve.Wait()

	// Keys made by root for a unit whose User= is another: the start says
	// whose files to fix, not to make them again.
	if os.Geteuid() != 0 {
		return
	}
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	os.Chmod(etc, 0o755)
	os.Chmod(filepath.Dir(etc), 0o711)                        // the test's own temporary folder
	os.Chown(filepath.Join(etc, "admin-token"), 65534, 65534) // the token given to the unit's user, the keys not
	if b, err := os.ReadFile(crtxdBinary(t)); err != nil || os.WriteFile(filepath.Join(bin, "crtxd"), b, 0o755) != nil {
		t.Fatal(err)
	}
	nobody := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", filepath.Join(bin, "crtxd"), "serve")
	nobody.Env = env
	if out, err := nobody.CombinedOutput(); err == nil || !bytes.Contains(out, []byte("give them to the user it runs as")) {
		t.Errorf("keys another user cannot read: %v\n%s", err, out)
	}
}
