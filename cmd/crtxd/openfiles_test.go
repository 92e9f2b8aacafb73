package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// serveLimited starts crtxd serve under a shell's ulimit and returns its
// stderr so far and its soft open-file limit, read from /proc, once it is
// ready.
func serveLimited(t *testing.T, ulimit string, args ...string) (stderr, soft string) {
	t.Helper()
	addr := freeAddr()
	cmd := exec.Command("bash", "-c", ulimit+` && exec "$0" "$@"`, crtxdBinary(t), "serve", "--addr", addr, "--data", t.TempDir())
	cmd.Args = append(cmd.Args, args...)
	var out syncBuffer // written by the process while the test reads it
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	if err := waitUp(ctx, "http://"+addr+"/readyz"); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid))
	if err != nil {
		t.Skip("no /proc here")
	}
	for _, line := range strings.Split(string(limits), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "Max open files") && len(f) >= 5 {
			soft = f[3]
		}
	}
	return out.String(), soft
}

// Every call in flight holds two open files: crtxd runs with the soft limit
// raised to one below the hard one (Go's runtime does it at start), and
// warns when that is below what --max-dispatches needs.
func TestServeOpenFileLimit(t *testing.T) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Max < 4096 {
		t.Skipf("hard open-file limit %d: too low to lower the soft one under it", l.Max)
	}
	stderr, soft := serveLimited(t, "ulimit -Sn 1024", "--max-dispatches", "100")
	// Go sets one below the hard limit, to notice a later prlimit.
	if soft != fmt.Sprint(l.Max-1) && soft != fmt.Sprint(l.Max) {
		t.Errorf("soft open-file limit %s under ulimit -Sn 1024, want about the hard %d", soft, l.Max)
	}
	if strings.Contains(stderr, "open-file limit") {
		t.Errorf("warned with room for 100 dispatches: %s", stderr)
	}
	stderr, _ = serveLimited(t, "ulimit -n 2048", "--max-dispatches", "10000")
	if !strings.Contains(stderr, "open-file limit is below what --max-dispatches needs") || !strings.Contains(stderr, "needed=21024") {
		t.Errorf("no warning with 2,048 files for 10,000 dispatches: %s", stderr)
	}
}
