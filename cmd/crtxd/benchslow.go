package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

// slowFlags are the slow scenarios' settings: calls synchronous calls
// started rate a second against an agent that answers after delay.
type slowFlags struct {
	calls, rate int
	delay       time.Duration
}

func (s slowFlags) check() error {
	if s.calls < 1 || s.rate < 1 || s.delay <= 0 {
		return errors.New("--slow-calls and --slow-rate must be at least 1, --slow-delay more than 0")
	}
	return nil
}

// span is how long the calls take to arrive.
func (s slowFlags) span() time.Duration {
	return time.Duration(float64(s.calls) / float64(s.rate) * float64(time.Second))
}

// fairRate is the pace of the measured agent's calls in the fairness
// scenario: few, so that they change nothing but what they measure.
const fairRate = 50

// slowParties is how many agents and wallets the slow scenarios spread
// over, and the pace of the fairness scenario's flood, sized from the
// limits the marketplace child runs with (crtxd serve's defaults): the
// calls in flight at once (rate × delay, half as many again for answers
// late past the delay) may hold no more than a creator's share of the
// dispatch slots on one agent, nor more than --max-inflight-per-key on one
// API key (each wallet has one). The flood keeps half as many again as one
// agent's share in flight, on agent 0 from every wallet but the last,
// which calls agent 1 alone.
type slowParties struct {
	agents, wallets, share, floodRate int
}

func sizeSlow(f benchFlags, s slowFlags, cfg daemon.Config) slowParties {
	share := max(1, int(cfg.MaxDispatchShare*float64(cfg.MaxDispatches)))
	perKey := cfg.MaxInFlightPerKey
	if perKey == 0 {
		perKey = math.MaxInt
	}
	demand := 1.5 * min(float64(s.calls), float64(s.rate)*s.delay.Seconds())
	p := slowParties{share: share, floodRate: int(math.Ceil(1.5 * float64(share) / s.delay.Seconds()))}
	p.agents = max(f.agents, 2, int(math.Ceil(demand/float64(share))))
	flood := 1.5 * float64(share)
	p.wallets = max(f.wallets, int(math.Ceil(demand/float64(perKey))), int(math.Ceil(flood/float64(perKey)))+1)
	return p
}

// benchSlow runs the slow scenarios on the marketplace at base (process
// pid), whose agents answer from the stub at slowURL after --slow-delay.
//
// slow: --slow-calls synchronous calls arriving --slow-rate a second, call
// i on agent i mod agents from wallet i mod wallets; every one should
// complete, just after the delay.
//
// fair: one agent's calls (fairRate a second, from a wallet of its own)
// measured alone, then beside a flood of calls on another agent beyond its
// share of the dispatch slots, which the marketplace refuses at once
// (503) past that share: the measured agent's latency should not move.
func benchSlow(ctx context.Context, f benchFlags, cfg daemon.Config, base, pprofAddr string, pid int, skey ed25519.PrivateKey, slowURL string,
	gen *loadClient, run func(result), stderr io.Writer) error {
	p := sizeSlow(f, f.slow, cfg)
	g := f
	g.agents, g.wallets = p.agents, p.wallets
	fmt.Fprintf(stderr, "slow: listing %d agents answering after %s, funding %d wallets…\n", p.agents, f.slow.delay, p.wallets)
	agents, keys, err := benchParties(ctx, base, g, skey, slowURL, crtx.Devnet, 0)
	if err != nil {
		return err
	}
	completed := []byte(`"status":"completed"`)
	call := func(agent, key string) error {
		return gen.call("POST", base+"/v1/agents/"+agent+"/execute", key, `{"task":"t"}`, 200, func(b []byte) error {
			if !bytes.Contains(b, completed) {
				return fmt.Errorf("not completed: %.200s", b)
			}
			return nil
		})
	}
	delayMS := float64(f.slow.delay.Milliseconds())
	if f.want("slow") {
		resetPeakRSS(pid)
		// Taken when the most calls are in flight: the last arrivals, all
		// the delay's calls before them still waiting.
		heap := heapAt(f, cfg, "slow", pprofAddr, max(f.slow.span(), f.slow.delay)-200*time.Millisecond, stderr)
		r := arrivals(fmt.Sprintf("slow: %d sync calls at %d/s, agent %s", f.slow.calls, f.slow.rate, f.slow.delay), f.slow.rate, f.slow.calls,
			func(i int) error { return call(agents[i%len(agents)], keys[i%len(keys)]) })
		r.AgentDelayMS, r.PeakRSSMB = delayMS, peakRSS(pid)
		run(r)
		fmt.Fprintf(stderr, "%-44s %d completed, %d failed, p99 %.0f ms over the agent's %s; peak RSS %.0f MiB\n", "",
			r.OK, r.Errors, r.P99MS-delayMS, f.slow.delay, r.PeakRSSMB)
		if err := <-heap; err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
		settle(pid, time.Minute)
	}
	if !f.want("fair") {
		return nil
	}
	n := max(1, int(fairRate*f.slow.span().Seconds()))
	measured := func(i int) error { return call(agents[1], keys[len(keys)-1]) }
	resetPeakRSS(pid)
	alone := arrivals(fmt.Sprintf("fair: agent 1 at %d/s alone", fairRate), fairRate, n, measured)
	alone.AgentDelayMS, alone.PeakRSSMB = delayMS, peakRSS(pid)
	run(alone)
	settle(pid, time.Minute)
	resetPeakRSS(pid)
	floodN := max(1, int(float64(p.floodRate)*f.slow.span().Seconds()))
	floodDone := make(chan result, 1)
	go func() {
		floodDone <- arrivals(fmt.Sprintf("fair: flood of agent 0 at %d/s (its share %d slots; refusals count as errors)", p.floodRate, p.share),
			p.floodRate, floodN, func(i int) error { return call(agents[0], keys[i%(len(keys)-1)]) })
	}()
	beside := arrivals(fmt.Sprintf("fair: agent 1 at %d/s beside the flood", fairRate), fairRate, n, measured)
	flood := <-floodDone
	beside.AgentDelayMS, beside.PeakRSSMB = delayMS, peakRSS(pid)
	flood.AgentDelayMS, flood.PeakRSSMB = delayMS, beside.PeakRSSMB
	run(beside)
	run(flood)
	fmt.Fprintf(stderr, "%-44s agent 1's p99 %.0f ms alone, %.0f ms beside the flood (%+.0f ms)\n", "",
		alone.P99MS, beside.P99MS, beside.P99MS-alone.P99MS)
	return nil
}

// heapAt writes the marketplace's heap profile after at, when
// --heapprofile names a file: that file for the slow scenario, prefixed
// with the scenario's name for another (held-heap.prof), and with the
// engine's when --db names several (sqlite-heap.prof).
func heapAt(f benchFlags, cfg daemon.Config, scenario, pprofAddr string, at time.Duration, stderr io.Writer) <-chan error {
	heap := make(chan error, 1)
	if f.heapprofile == "" {
		heap <- nil
		return heap
	}
	base := filepath.Base(f.heapprofile)
	if scenario != "slow" {
		base = scenario + "-" + base
	}
	if len(f.dbs) > 1 {
		engine := "sqlite"
		if cfg.DB != "" {
			engine = "postgres"
		}
		base = engine + "-" + base
	}
	file := filepath.Join(filepath.Dir(f.heapprofile), base)
	go func() { time.Sleep(at); heap <- heapProfile(pprofAddr, file, stderr) }()
	return heap
}

// heapProfile writes the marketplace's heap profile, of what is live
// after a collection, to file and its goroutines to file.goroutines, and
// prints their count and the runtime's memory figures.
func heapProfile(pprofAddr, file string, stderr io.Writer) error {
	get := func(path string) ([]byte, error) {
		resp, err := http.Get("http://" + pprofAddr + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	b, err := get("/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return err
	}
	g, err := get("/debug/pprof/goroutine?debug=1")
	if err != nil {
		return err
	}
	// Beside the profile, where each goroutine waits: what holds a call.
	if err := os.WriteFile(file+".goroutines", g, 0o644); err != nil {
		return err
	}
	first, _, _ := bytes.Cut(g, []byte("\n"))
	fmt.Fprintf(stderr, "%-44s %s\n", "", first)
	text, err := get("/debug/pprof/heap?debug=1")
	if err != nil {
		return err
	}
	// The runtime's figures close the text profile: "# HeapInuse = …".
	for _, line := range strings.Split(string(text), "\n") {
		for _, name := range []string{"HeapAlloc", "HeapInuse", "Stack", "Sys", "NumGC"} {
			if strings.HasPrefix(line, "# "+name+" = ") {
				fmt.Fprintf(stderr, "%-44s %s\n", "", line[2:])
			}
		}
	}
	return nil
}

// resetPeakRSS starts the process's peak resident set (VmHWM) again from
// its resident set now, so that the next reading is one scenario's.
func resetPeakRSS(pid int) {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}
