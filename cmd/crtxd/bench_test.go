package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/store/storetest"
)

// crtxd bench runs every scenario and writes its figures as JSON and SVG.
// (The figures themselves are measured by running it, not by tests.)
func TestBenchRuns(t *testing.T) {
	dir := t.TempDir()
	rep := runBench(t, "--duration", "300ms", "--clients", "4", "--catalog", "200", "--executions", "200", "--rate", "50",
		"--svg", filepath.Join(dir, "b.svg"))
	if len(rep.Results) != 11 || len(rep.Engines) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	if e := rep.Engines[0]; e.DB != "sqlite" || e.PeakRSSMB <= 0 || e.CPUPerSyncUS <= 0 || e.TxPerCommit < 1 || e.WriterPerSyncUS <= 0 {
		t.Fatalf("report = %+v", rep)
	}
	for _, r := range rep.Results {
		if r.OK == 0 || r.Errors != 0 {
			t.Errorf("%s: %d ok, %d errors", r.Name, r.OK, r.Errors)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "b.svg"))
	if !strings.HasPrefix(string(svg), "<svg") || strings.Count(string(svg), "<rect") != 22 {
		t.Errorf("chart: %.200s", svg)
	}
}

// runBench runs crtxd bench with args, writing its figures to a JSON file
// it reads back.
func runBench(t *testing.T, args ...string) report {
	t.Helper()
	out := filepath.Join(t.TempDir(), "b.json")
	b, err := exec.Command(crtxdBinary(t), append(append([]string{"bench"}, args...), "--json", out)...).CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, b)
	}
	var rep report
	j, _ := os.ReadFile(out)
	if err := json.Unmarshal(j, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// --only runs the named scenarios alone; --profile picks the one profiled.
func TestBenchOnly(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	rep := runBench(t, "--only", "proxy,healthz", "--duration", "200ms", "--clients", "2",
		"--catalog", "10", "--executions", "10", "--cpuprofile", prof, "--profile", "healthz")
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

// The baseline proxy keeps a connection to the stub for each of the load's
// clients: a closed loop through it opens no more than that.
func TestBenchProxyKeepsConnections(t *testing.T) {
	var opened atomic.Int64
	stub := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond) // answers overlap, as a creator's do
		io.WriteString(w, "ok")
	}))
	stub.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	stub.Start()
	defer stub.Close()
	const clients = 16
	addr := freeAddr()
	proxy := exec.Command(crtxdBinary(t), "bench", "proxy", addr, stub.URL, strconv.Itoa(clients))
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { proxy.Process.Kill(); proxy.Wait() }()
	if err := waitUp(ctx, "http://"+addr+"/"); err != nil {
		t.Fatal(err)
	}
	opened.Store(0)
	gen := newLoadClient()
	defer gen.reset()
	r := load("through the proxy", clients, 500*time.Millisecond, func(int) error {
		return gen.call("GET", "http://"+addr+"/", "", "", 200, nil)
	})
	if r.Errors != 0 || r.OK < 100 {
		t.Fatalf("load: %+v", r)
	}
	// Go's transport may dial a connection for a request that another
	// freed meanwhile, so a few more than clients can open; Go's default
	// of 2 idle connections opened about one for every two requests.
	if n := opened.Load(); n > 2*clients {
		t.Errorf("the proxy opened %d connections to the stub for %d requests of %d clients, want at most %d", n, r.OK, clients, 2*clients)
	}
}

// One run measures both engines, executions spread over wallets and agents.
func TestBenchEngines(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	rep := runBench(t, "--db", "sqlite,"+dsn, "--only", "sync", "--duration", "300ms", "--clients", "6",
		"--wallets", "3", "--agents", "2", "--replicas", "2", "--catalog", "10", "--executions", "10")
	if len(rep.Engines) != 2 || rep.Engines[0].DB != "sqlite" || rep.Engines[1].DB != "postgres" || rep.Wallets != 3 || rep.Agents != 2 {
		t.Fatalf("report = %+v", rep)
	}
	// Replicas share a database: SQLite runs one.
	want := []struct{ engine, name string }{{"sqlite", "sync executions"}, {"postgres", "sync executions"},
		{"postgres", "sync executions, 2 replicas"}}
	if len(rep.Results) != len(want) {
		t.Fatalf("results = %+v", rep.Results)
	}
	for i, r := range rep.Results {
		if r.Engine != want[i].engine || r.Name != want[i].name || r.OK == 0 || r.Errors != 0 {
			t.Errorf("result %d = %+v, want %v", i, r, want[i])
		}
	}
}

// The x402 scenario runs on a local Solana network it starts itself: one
// call at a time paid with an API key, then with x402 payments the
// marketplace settles after the result and before the call, and where an
// x402 call's time went, by stage.
func TestBenchX402(t *testing.T) {
	chaintest.Require(t)
	rep := runBench(t, "--only", "x402", "--duration", "1s", "--x402-slot", "50ms")
	if len(rep.Engines) != 1 || rep.X402SlotMS != 50 || len(rep.Results) != 3 {
		t.Fatalf("report = %+v", rep)
	}
	for i, name := range []string{"API key, one at a time", "x402 settled after, one at a time", "x402 settled first, one at a time"} {
		if r := rep.Results[i]; r.Engine != "sqlite" || r.Name != name || r.OK == 0 || r.Errors != 0 {
			t.Errorf("result %d = %+v, want %q", i, r, name)
		}
	}
	// Every x402 call passed each stage of its path, which the marketplace
	// timed: a payment settled after the result is simulated again before
	// it is sent, one settled first is not.
	for path, want := range map[string][]string{
		"settled after": {"client", "check", "simulate", "resimulate", "settle"},
		"settled first": {"client", "check", "simulate", "settle"},
	} {
		got := rep.Engines[0].X402StageMS[path]
		if len(got) != len(want) {
			t.Errorf("%s: stages %v, want %v", path, got, want)
		}
		for _, stage := range want {
			if got[stage] <= 0 {
				t.Errorf("%s: stage %s took %v ms a call", path, stage, got[stage])
			}
		}
	}
}
