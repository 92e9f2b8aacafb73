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
	if len(rep.Results) != 9 || rep.PeakRSSMB <= 0 || rep.CPUPerSyncUS <= 0 || rep.TxPerCommit < 1 {
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
