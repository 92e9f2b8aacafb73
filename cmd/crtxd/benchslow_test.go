package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

// The slow scenarios run a stub that answers after --slow-delay: every
// call completes no sooner, and the marketplace's peak RSS is each
// scenario's own.
func TestBenchSlow(t *testing.T) {
	const delay = 400 * time.Millisecond
	heap := filepath.Join(t.TempDir(), "heap.prof")
	rep := runBench(t, "--only", "slow,fair", "--slow-calls", "60", "--slow-rate", "100", "--slow-delay", delay.String(), "--heapprofile", heap,
		"--catalog", "10", "--executions", "10")
	names := []string{"slow: 60 sync calls at 100/s, agent 400ms", "fair: agent 1 at 50/s alone", "fair: agent 1 at 50/s beside the flood", "fair: flood"}
	if len(rep.Results) != len(names) {
		t.Fatalf("results = %+v", rep.Results)
	}
	for i, r := range rep.Results {
		if !strings.HasPrefix(r.Name, names[i]) || r.AgentDelayMS != 400 || r.PeakRSSMB <= 0 {
			t.Errorf("result %d = %+v, want %q", i, r, names[i])
		}
		if r.OK > 0 && r.P50MS < 400 {
			t.Errorf("%s: p50 %.0f ms, under the agent's delay", r.Name, r.P50MS)
		}
	}
	if r := rep.Results[0]; r.OK != 60 || r.Errors != 0 {
		t.Errorf("slow: %d completed, %d failed (%s)", r.OK, r.Errors, r.FirstError)
	}
	for _, r := range rep.Results[1:3] {
		if r.OK != 30 || r.Errors != 0 { // 50/s over the 0.6 s the 60 calls take to arrive
			t.Errorf("%s: %d completed, %d failed (%s)", r.Name, r.OK, r.Errors, r.FirstError)
		}
	}
	// The flood keeps half as many again as its agent's share in flight:
	// the rest is refused at once, unavailable.
	if r := rep.Results[3]; r.OK == 0 || r.Errors == 0 || !strings.Contains(r.FirstError, "status 503") {
		t.Errorf("flood: %+v", r)
	}
	// A pprof profile is gzipped protocol buffers.
	if p, err := os.ReadFile(heap); err != nil || len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
		t.Errorf("heap profile: %v, % x", err, p[:min(len(p), 4)])
	}
	for _, bad := range [][]string{{"--slow-calls", "0"}, {"--slow-rate", "0"}, {"--slow-delay", "0s"}} {
		if b, err := exec.Command(crtxdBinary(t), append([]string{"bench", "--only", "slow"}, bad...)...).CombinedOutput(); err == nil {
			t.Errorf("%s ran: %s", bad, b)
		}
	}
}

// crtxd bench stub --delay answers each call after the delay.
func TestBenchStubDelay(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	addr := freeAddr()
	stub := exec.Command(crtxdBinary(t), "bench", "stub", addr, hex.EncodeToString(key.Seed()), "--delay", "300ms")
	if err := stub.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stub.Process.Kill(); stub.Wait() }()
	if err := waitUp(ctx, "http://"+addr+"/"); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 30})
	t0 := time.Now()
	resp, err := http.Post("http://"+addr+"/execute", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply crtx.CreatorReply
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || reply.Status != "completed" {
		t.Fatalf("reply %+v, %v", reply, err)
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("answered after %s, want at least 300ms", d)
	}
}

// The slow scenarios spread over enough agents and wallets that neither a
// creator's share of the slots nor the per-key limit refuses a call, and
// the flood keeps more than its agent's share in flight.
func TestSizeSlow(t *testing.T) {
	cfg := daemon.Defaults()
	cfg.MaxDispatches, cfg.MaxDispatchShare, cfg.MaxInFlightPerKey = 10_000, 0.25, 256
	f := benchFlags{wallets: 1, agents: 1, slow: slowFlags{calls: 10_000, rate: 1000, delay: 4 * time.Second}}
	p := sizeSlow(f, f.slow, cfg)
	// 6,000 in flight at most (1.5 × 1,000/s × 4 s): 3 agents of 2,500
	// slots, 24 keys of 256; the flood 3,750 in flight, 15 keys and one
	// for the measured agent.
	if p != (slowParties{agents: 3, wallets: 24, share: 2500, floodRate: 938}) {
		t.Errorf("sizeSlow = %+v", p)
	}
	f.wallets, f.agents = 40, 5
	if p := sizeSlow(f, f.slow, cfg); p.wallets != 40 || p.agents != 5 {
		t.Errorf("sizeSlow with more asked = %+v", p)
	}
}

// The stream scenarios time each stream to its first delta, straight to a
// stub that streams and through the marketplace; the held scenario's
// streams stay open after it, so a first delta timed before their end
// shows the marketplace passing pieces on as they come.
func TestBenchStreams(t *testing.T) {
	const hold = 5 * time.Second
	heap := filepath.Join(t.TempDir(), "heap.prof")
	rep := runBench(t, "--only", "stream,held", "--duration", "1s", "--stream-rate", "20",
		"--held-streams", "40", "--held-rate", "40", "--held-for", hold.String(), "--heapprofile", heap, "--catalog", "10", "--executions", "10")
	names := []string{"stream: first delta, stub alone at 20/s", "stream: first delta, marketplace at 20/s", "held: 40 streams at 40/s, held 5s"}
	if len(rep.Results) != len(names) {
		t.Fatalf("results = %+v", rep.Results)
	}
	for i, r := range rep.Results {
		if r.Name != names[i] || r.Errors != 0 || r.OK != []int64{20, 20, 40}[i] {
			t.Errorf("result %d = %+v, want %q", i, r, names[i])
		}
		if r.P50MS <= 0 {
			t.Errorf("%s: first delta after %.1f ms", r.Name, r.P50MS)
		}
	}
	// A held stream lasts hold after its first delta: timed to the first,
	// it is under that, a margin no loaded machine eats (pieces held back
	// to the end would take the whole hold).
	if r := rep.Results[2]; r.PeakRSSMB <= 0 || r.P50MS >= float64(hold.Milliseconds()) {
		t.Errorf("held: peak RSS %.1f MiB, first delta after %.1f ms", r.PeakRSSMB, r.P50MS)
	}
	// The heap profile is taken while the streams are held.
	if p, err := os.ReadFile(filepath.Join(filepath.Dir(heap), "held-heap.prof")); err != nil || len(p) < 2 || p[0] != 0x1f {
		t.Errorf("held heap profile: %v", err)
	}
	for _, bad := range [][]string{{"--held-streams", "0"}, {"--held-rate", "0"}, {"--held-for", "0s"}, {"--stream-rate", "0"}} {
		if b, err := exec.Command(crtxdBinary(t), append([]string{"bench", "--only", "stream"}, bad...)...).CombinedOutput(); err == nil {
			t.Errorf("%s ran: %s", bad, b)
		}
	}
}
