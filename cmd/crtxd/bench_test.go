package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// crtxd bench runs every scenario and writes its figures as JSON and SVG.
// (The figures themselves are measured by running it, not by tests.)
func TestBenchRuns(t *testing.T) {
	dir := t.TempDir()
	out, err := exec.Command(crtxdBinary(t), "bench", "--duration", "300ms", "--clients", "4", "--agents", "200",
		"--executions", "200", "--rate", "50", "--json", filepath.Join(dir, "b.json"), "--svg", filepath.Join(dir, "b.svg")).CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var rep report
	b, _ := os.ReadFile(filepath.Join(dir, "b.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 9 || rep.PeakRSSMB <= 0 || rep.CPUPerSyncUS <= 0 || rep.TxPerCommit < 1 || rep.WriterPerSyncUS <= 0 {
		t.Fatalf("report = %+v", rep)
	}
	for _, r := range rep.Results {
		if r.OK == 0 || r.Errors != 0 {
			t.Errorf("%s: %d ok, %d errors", r.Name, r.OK, r.Errors)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "b.svg"))
	if !strings.HasPrefix(string(svg), "<svg") || strings.Count(string(svg), "<rect") != 18 {
		t.Errorf("chart: %.200s", svg)
	}
}

// --only runs the named scenarios alone; --profile picks the one profiled.
func TestBenchOnly(t *testing.T) {
	out, prof := filepath.Join(t.TempDir(), "b.json"), filepath.Join(t.TempDir(), "cpu.prof")
	b, err := exec.Command(crtxdBinary(t), "bench", "--only", "proxy,healthz", "--duration", "200ms", "--clients", "2",
		"--agents", "10", "--executions", "10", "--json", out, "--cpuprofile", prof, "--profile", "healthz").CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, b)
	}
	var rep report
	b, _ = os.ReadFile(out)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[0].Name != "reverse proxy to the stub" || rep.Results[1].Name != "GET /healthz" {
		t.Fatalf("results = %+v", rep.Results)
	}
	// A pprof profile is gzipped protocol buffers.
	if p, err := os.ReadFile(prof); err != nil || len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
		t.Fatalf("profile of healthz: %v, % x", err, p[:min(len(p), 4)])
	}
	// The proxy is not the marketplace, whose profile --cpuprofile takes.
	for _, bad := range [][]string{{"--only", "nosuch"}, {"--profile", "nosuch"}, {"--profile", "proxy"}} {
		if b, err := exec.Command(crtxdBinary(t), append([]string{"bench"}, bad...)...).CombinedOutput(); err == nil {
			t.Fatalf("%s ran: %s", bad, b)
		}
	}
}
