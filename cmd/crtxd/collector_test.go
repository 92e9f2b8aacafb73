package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// collectorMetrics starts crtxd serve with env and args and returns the Go
// collector's settings as its /metrics reports them.
func collectorMetrics(t *testing.T, env []string, args ...string) (gogc, limit string) {
	t.Helper()
	addr := freeAddr()
	cmd := exec.Command(crtxdBinary(t), append([]string{"serve", "--addr", addr, "--data", t.TempDir(), "--log-level", "error"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out syncBuffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	if err := waitUp(ctx, "http://"+addr+"/readyz"); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_gc_gogc_percent "); ok {
			gogc = v
		}
		if v, ok := strings.CutPrefix(line, "go_gc_gomemlimit_bytes "); ok {
			limit = v
		}
	}
	return gogc, limit
}

// --memory-limit-mib sets the runtime's soft memory limit, which bounds
// what many calls in flight hold resident; GOMEMLIMIT, when set, wins, as
// GOGC does over --gc-percent.
func TestServeCollectorFlags(t *testing.T) {
	gogc, limit := collectorMetrics(t, nil, "--gc-percent", "250", "--memory-limit-mib", "300")
	if gogc != "250" || limit != "3.145728e+08" {
		t.Errorf("--gc-percent 250 --memory-limit-mib 300: GOGC %s, limit %s bytes; want 250 and 314572800", gogc, limit)
	}
	gogc, limit = collectorMetrics(t, []string{"GOMEMLIMIT=200MiB", "GOGC=150"}, "--memory-limit-mib", "300")
	if gogc != "150" || limit != "2.097152e+08" {
		t.Errorf("GOMEMLIMIT=200MiB GOGC=150 beside the flags: GOGC %s, limit %s bytes; want the variables'", gogc, limit)
	}
	if _, limit = collectorMetrics(t, nil); limit != "9.223372036854776e+18" {
		t.Errorf("no limit by default: %s", limit)
	}
}

// A memory limit that is no size is refused at start, not ignored.
func TestServeRefusesANegativeMemoryLimit(t *testing.T) {
	code, out := crtxd(t, "serve", "--addr", freeAddr(), "--data", t.TempDir(), "--memory-limit-mib", "-1")
	if code == 0 || !strings.Contains(out, "--memory-limit-mib -1") {
		t.Errorf("crtxd serve --memory-limit-mib -1: exit %d, %s", code, out)
	}
}
