package main

import (
	"fmt"
	"html"
	"os"
	"strings"
)

// result is one scenario's figures.
type result struct {
	Name string `json:"name"`
	// Engine is the marketplace's store engine; empty for the baselines.
	Engine  string  `json:"engine,omitempty"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	OK      int64   `json:"ok"`
	Errors  int64   `json:"errors"`
	// FirstError says what the first failed request got.
	FirstError string  `json:"first_error,omitempty"`
	RPS        float64 `json:"rps"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	// AgentDelayMS is how long the stub took to answer each call (the
	// slow scenarios): the floor of every latency above.
	AgentDelayMS float64 `json:"agent_delay_ms,omitempty"`
	// PeakRSSMB is the marketplace's peak resident set during this
	// scenario alone (the slow scenarios).
	PeakRSSMB float64 `json:"marketplace_peak_rss_mib,omitempty"`
}

// engineFigures are what one marketplace (one store engine) showed beside
// its scenarios.
type engineFigures struct {
	DB        string  `json:"db"`
	PeakRSSMB float64 `json:"marketplace_peak_rss_mib,omitempty"`
	// TxPerCommit is the group writer's mean group during the sync
	// scenario (SQLite).
	TxPerCommit float64 `json:"transactions_per_commit,omitempty"`
	// WriterPerSyncUS is the group writer's busy time per synchronous
	// execution: one writer, so 1e6 / WriterPerSyncUS bounds executions/s.
	WriterPerSyncUS float64 `json:"writer_us_per_sync_execution,omitempty"`
	// CPUPerSyncUS is the marketplace's CPU time (user and system) per
	// synchronous execution, which throughput on a shared machine hides.
	CPUPerSyncUS float64 `json:"cpu_us_per_sync_execution,omitempty"`
	// SettleSeconds is how long the marketplace stayed busy after the
	// write scenarios (sealing and rolling up their ledger transactions).
	SettleSeconds float64 `json:"settle_seconds,omitempty"`
	// X402StageMS is where an x402 call's time went beyond an API-key
	// call's, by path (settled after its result, settled first), in ms a
	// call by stage: client (building and signing the payment), check,
	// simulate, resimulate (just before a payment settled after the result
	// is sent), settle.
	X402StageMS map[string]map[string]float64 `json:"x402_stage_ms_per_call,omitempty"`
}

// report is what a run of crtxd bench writes with --json.
type report struct {
	Machine string `json:"machine"`
	// Wallets and Agents spread the execution scenarios: client c pays
	// from wallet c mod Wallets and calls agent c mod Agents.
	Wallets int `json:"wallets"`
	Agents  int `json:"agents"`
	// X402SlotMS is the slot time of the x402 scenario's local network.
	X402SlotMS float64         `json:"x402_slot_ms,omitempty"`
	Results    []result        `json:"results"`
	Engines    []engineFigures `json:"engines"`
}

// label names a result with its engine.
func label(r result) string {
	if r.Engine == "" {
		return r.Name
	}
	return r.Engine + ": " + r.Name
}

// engineName is what the report calls the engine of a --db value.
func engineName(db string) string {
	if db == "sqlite" {
		return "sqlite"
	}
	return "postgres"
}

func machine() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	cpus := strings.Count(string(b), "processor\t:")
	return fmt.Sprintf("%d CPUs", cpus)
}

// chart draws requests per second and p99 latency of each scenario as bars.
func chart(r report) string {
	var b strings.Builder
	h := 40*len(r.Results) + 60
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="%d" font-family="sans-serif" font-size="12">`, h)
	var engines []string
	for _, e := range r.Engines {
		engines = append(engines, fmt.Sprintf("%s (peak RSS %.0f MiB)", e.DB, e.PeakRSSMB))
	}
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">crtxd bench — %s; %s; %d wallets, %d agents</text>`,
		strings.Join(engines, ", "), r.Machine, r.Wallets, r.Agents)
	var maxRPS, maxP99 float64
	for _, x := range r.Results {
		maxRPS, maxP99 = max(maxRPS, x.RPS), max(maxP99, x.P99MS)
	}
	for i, x := range r.Results {
		y := 40 + i*40
		w1 := int(300 * x.RPS / max(maxRPS, 1))
		w2 := int(200 * x.P99MS / max(maxP99, 1))
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`, y+14, html.EscapeString(label(x)))
		fmt.Fprintf(&b, `<rect x="280" y="%d" width="%d" height="14" fill="#0b57d0"/><text x="%d" y="%d">%.0f/s</text>`, y+2, w1, 285+w1, y+14, x.RPS)
		fmt.Fprintf(&b, `<rect x="650" y="%d" width="%d" height="14" fill="#c5221f"/><text x="%d" y="%d">p99 %.1f ms</text>`, y+2, w2, 655+w2, y+14, x.P99MS)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
