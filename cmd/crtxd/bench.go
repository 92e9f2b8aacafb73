package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/spf13/cobra"
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

// scenarios are the names --only takes; --profile takes those of the
// marketplace (all but the first two).
var scenarios = []string{"stub", "proxy", "sync", "async", "paced", "slow", "fair", "healthz", "agents", "executions", "x402"}

// optIn are the scenarios that run only when --only names them: the slow
// ones take minutes, and x402 a local Solana network on Node.js.
var optIn = []string{"slow", "fair", "x402"}

// load runs clients closed loops of fn for d; fn is told its client's number.
func load(name string, clients int, d time.Duration, fn func(client int) error) result {
	var errs atomic.Int64
	var first atomic.Pointer[error]
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := fn(c); err != nil {
					errs.Add(1)
					first.CompareAndSwap(nil, &err)
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	r := summarize(name, clients, time.Since(start), slices.Concat(lat...), errs.Load())
	if err := first.Load(); err != nil {
		r.FirstError = (*err).Error()
	}
	return r
}

// paced starts fn rate times a second for d, whatever the answers' pace;
// the i-th call is told i.
func paced(name string, rate int, d time.Duration, fn func(i int) error) result {
	return arrivals(name, rate, max(1, int(float64(rate)*d.Seconds())), fn)
}

// arrivals starts n calls of fn, rate a second, whatever the answers' pace,
// and waits for them all; the i-th call is told i.
func arrivals(name string, rate, n int, fn func(i int) error) result {
	interval := time.Second / time.Duration(rate)
	var mu sync.Mutex
	var lat []time.Duration
	var errs int64
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Go(func() {
			t0 := time.Now()
			err := fn(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				first = cmp.Or(first, err)
				return
			}
			lat = append(lat, time.Since(t0))
		})
	}
	wg.Wait()
	r := summarize(name, 0, time.Since(start), lat, errs)
	if first != nil {
		r.FirstError = first.Error()
	}
	return r
}

// summarize turns the latencies of the answered requests into figures.
func summarize(name string, clients int, elapsed time.Duration, lat []time.Duration, errs int64) result {
	slices.Sort(lat)
	r := result{Name: name, Clients: clients, Seconds: elapsed.Seconds(), OK: int64(len(lat)), Errors: errs,
		RPS: float64(len(lat)) / elapsed.Seconds()}
	if len(lat) > 0 {
		ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		r.P50MS, r.P99MS, r.MaxMS = ms(0.5), ms(0.99), ms(1)
	}
	return r
}

// benchFlags are crtxd bench's settings.
type benchFlags struct {
	clients, catalog, execs, wallets, agents, rate int
	replicas, dbConns                              int
	dur, x402Slot                                  time.Duration
	slow                                           slowFlags
	db, only, jsonOut, svgOut                      string
	dbs                                            []string
	cpuprofile, profiled, heapprofile              string
	want                                           func(scenario string) bool
}

func benchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the marketplace against a bare reverse proxy",
		Long: `Start a stub creator and a plain reverse proxy to it, then, for each engine of --db in
turn, the marketplace (a crtxd serve child) with the stub listed, and measure them side by side
with closed loops of concurrent clients. docs/performance.md explains the scenarios and figures.`,
		Example: `  crtxd bench --duration 10s --clients 64 --json docs/bench-sqlite.json --svg docs/bench-sqlite.svg
  crtxd bench --db sqlite,postgres://postgres@127.0.0.1/bench --only sync,async`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bench(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.clients, "clients", 64, "concurrent clients of each scenario")
	fs.DurationVar(&f.dur, "duration", 10*time.Second, "how long each scenario runs")
	fs.StringVar(&f.db, "db", "sqlite", "the engines to measure, one after another in this run, comma-separated: sqlite, postgres://…")
	fs.IntVar(&f.catalog, "catalog", 100_000, "agents in the catalog for the browse scenario")
	fs.IntVar(&f.execs, "executions", 100_000, "executions of the wallet for the list scenario")
	fs.IntVar(&f.replicas, "replicas", 1, "on PostgreSQL, also run the synchronous scenario on this many crtxd replicas of one database (client c calls replica c mod N)")
	fs.IntVar(&f.dbConns, "db-conns", daemon.Defaults().DBConns, "PostgreSQL connections each replica keeps open (crtxd serve --db-conns)")
	fs.IntVar(&f.wallets, "wallets", 1, "wallets the execution scenarios pay from (client c pays from wallet c mod N)")
	fs.IntVar(&f.agents, "agents", 1, "agents, each of its own creator, the execution scenarios call (client c calls agent c mod M)")
	fs.StringVar(&f.jsonOut, "json", "", "write the figures as JSON to this file")
	fs.StringVar(&f.svgOut, "svg", "", "draw the figures as an SVG chart to this file")
	fs.IntVar(&f.rate, "rate", 500, "executions per second of the latency-at-rate scenario")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write the marketplace's CPU profile during one scenario (--profile) to this file")
	fs.StringVar(&f.profiled, "profile", "sync", "the scenario --cpuprofile profiles: "+strings.Join(slices.DeleteFunc(slices.Clone(scenarios[2:]), func(s string) bool { return slices.Contains(optIn, s) }), ", "))
	fs.StringVar(&f.only, "only", "", "run only these scenarios, comma-separated: "+strings.Join(scenarios, ", ")+" (slow and fair run only when named)")
	fs.StringVar(&f.heapprofile, "heapprofile", "", "write the marketplace's heap profile, when the slow scenario has the most calls in flight, to this file")
	fs.IntVar(&f.slow.calls, "slow-calls", 10_000, "synchronous calls the slow scenario starts")
	fs.IntVar(&f.slow.rate, "slow-rate", 1000, "calls a second the slow scenario starts")
	fs.DurationVar(&f.slow.delay, "slow-delay", 4*time.Second, "how long the slow scenarios' agent takes to answer")
	fs.DurationVar(&f.x402Slot, "x402-slot", 400*time.Millisecond, "slot time of the x402 scenario's local Solana network (mainnet's is about 400ms)")
	var delay time.Duration
	stubCmd := &cobra.Command{
		Use: "stub ADDR SEED", Hidden: true, Args: cmdline.Args("ADDR", "SEED"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchStub(cmd.Context(), args, delay) },
	}
	stubCmd.Flags().DurationVar(&delay, "delay", 0, "answer each call after this long")
	// The stub creator and the proxy bench measures run as child
	// processes of this binary; they are no command for anyone else.
	cmd.AddCommand(&cobra.Command{
		Use: "proxy ADDR TARGET IDLE", Hidden: true, Args: cmdline.Args("ADDR", "TARGET", "IDLE"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchProxy(cmd.Context(), args) },
	}, stubCmd)
	return cmd
}

// bench starts a stub creator and a plain reverse proxy to it, then, for
// each engine of --db in turn, the marketplace (a crtxd serve child) with
// the stub listed, and measures them side by side with closed loops of
// concurrent clients.
func bench(ctx context.Context, f benchFlags, stdout, stderr io.Writer) error {
	if f.wallets < 1 || f.agents < 1 || f.clients < 1 || f.replicas < 1 || f.dbConns < 1 {
		return errors.New("--clients, --wallets, --agents, --replicas and --db-conns must be at least 1")
	}
	if err := f.slow.check(); err != nil {
		return err
	}
	for _, d := range strings.Split(f.db, ",") {
		if d = strings.TrimSpace(d); d != "sqlite" && !strings.HasPrefix(d, "postgres://") && !strings.HasPrefix(d, "postgresql://") {
			return fmt.Errorf("--db: %q is neither sqlite nor postgres://…", d)
		}
		f.dbs = append(f.dbs, strings.TrimSpace(d))
	}
	// This process is the load generator: its own garbage collections
	// would count in the latencies it measures, so it collects less often,
	// as crtxd serve does by default. The servers measured (the
	// marketplace, the proxy, the stub) are processes of their own with
	// their own settings.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	picked := map[string]bool{}
	for _, name := range strings.Split(f.only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			if !slices.Contains(scenarios, name) {
				return fmt.Errorf("--only: no scenario %q", name)
			}
			picked[name] = true
		}
	}
	if !slices.Contains(scenarios[2:], f.profiled) || slices.Contains(optIn, f.profiled) {
		return fmt.Errorf("--profile: no marketplace scenario %q", f.profiled)
	}
	// The slow scenarios take minutes and thousands of connections: they
	// run only when --only names them.
	f.want = func(name string) bool { return picked[name] || (len(picked) == 0 && !slices.Contains(optIn, name)) }

	// The stub creator and the baseline proxy are processes of their own,
	// as the marketplace is: in the generator's process the proxy would
	// skip the wake-ups between processes that every request to the
	// marketplace pays, and the stub's memory (the answers it keeps) would
	// be the generator's to collect while it measures.
	self, _ := os.Executable()
	started := func(name, addr string, args ...string) (stop func(), err error) {
		c := exec.CommandContext(ctx, self, append([]string{"bench", name, addr}, args...)...)
		c.Stderr = stderr
		if err := c.Start(); err != nil {
			return nil, err
		}
		stop = func() { c.Process.Signal(os.Interrupt); c.Wait() }
		if err := waitUp(ctx, "http://"+addr+"/"); err != nil {
			stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return stop, nil
	}
	_, skey, _ := ed25519.GenerateKey(nil)
	stubAddr, proxyAddr := freeAddr(), freeAddr()
	stopStub, err := started("stub", stubAddr, hex.EncodeToString(skey.Seed()))
	if err != nil {
		return err
	}
	defer stopStub()
	stopProxy, err := started("proxy", proxyAddr, "http://"+stubAddr, strconv.Itoa(f.clients))
	if err != nil {
		return err
	}
	defer stopProxy()
	stubURL, proxyURL := "http://"+stubAddr+"/execute", "http://"+proxyAddr+"/execute"
	// The slow scenarios' agent is a stub of its own that answers after
	// --slow-delay.
	var slowURL string
	if f.want("slow") || f.want("fair") {
		slowAddr := freeAddr()
		stopSlow, err := started("stub", slowAddr, hex.EncodeToString(skey.Seed()), "--delay", f.slow.delay.String())
		if err != nil {
			return err
		}
		defer stopSlow()
		slowURL = "http://" + slowAddr + "/execute"
	}

	gen := newLoadClient()
	defer gen.reset()
	rep := report{Machine: machine(), Wallets: f.wallets, Agents: f.agents}
	run := func(r result) {
		gen.reset()
		rep.Results = append(rep.Results, r)
		fmt.Fprintf(stderr, "%-44s %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  errors %d\n", label(r), r.RPS, r.P50MS, r.P99MS, r.Errors)
		if r.FirstError != "" {
			fmt.Fprintf(stderr, "%-44s first error: %s\n", "", r.FirstError)
		}
	}
	direct := func(u string) func(int) error {
		return func(int) error {
			body, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 30})
			return gen.call("POST", u, "", string(body), 200, nil)
		}
	}
	if f.want("stub") {
		run(load("stub alone", f.clients, f.dur, direct(stubURL)))
	}
	if f.want("proxy") {
		run(load("reverse proxy to the stub", f.clients, f.dur, direct(proxyURL)))
	}
	if f.want("paced") {
		run(paced(fmt.Sprintf("proxy at %d/s", f.rate), f.rate, f.dur, direct(proxyURL)))
	}
	var ch *benchChain
	if f.want("x402") {
		if ch, err = startBenchChain(ctx, f.x402Slot, stderr); err != nil {
			return fmt.Errorf("x402: %w", err)
		}
		defer ch.net.Stop()
		rep.X402SlotMS = float64(f.x402Slot.Microseconds()) / 1000
	}
	// The scenarios of the marketplace benchEngine starts: all but the
	// baselines' and x402's, which starts a marketplace of its own.
	engine := slices.ContainsFunc(scenarios[2:], func(s string) bool { return s != "x402" && f.want(s) })
	for _, db := range f.dbs {
		figures := engineFigures{DB: engineName(db)}
		if engine {
			if figures, err = benchEngine(ctx, f, db, skey, stubURL, slowURL, gen, run, stderr); err != nil {
				return fmt.Errorf("%s: %w", engineName(db), err)
			}
		}
		if ch != nil {
			on := func(r result) { r.Engine = figures.DB; run(r) }
			if figures.X402StageMS, err = benchX402(ctx, f, db, ch, skey, stubURL, on, stderr); err != nil {
				return fmt.Errorf("%s: x402: %w", engineName(db), err)
			}
		}
		rep.Engines = append(rep.Engines, figures)
	}
	fmt.Fprintf(stdout, "\n%-44s %9s %9s %9s %9s %7s\n", "scenario", "req/s", "p50 ms", "p99 ms", "max ms", "errors")
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "%-44s %9.0f %9.2f %9.2f %9.2f %7d\n", label(r), r.RPS, r.P50MS, r.P99MS, r.MaxMS, r.Errors)
	}
	for _, e := range rep.Engines {
		if engine {
			fmt.Fprintf(stdout, "%s: marketplace peak RSS %.1f MiB, %.0f µs of its CPU a synchronous execution\n", e.DB, e.PeakRSSMB, e.CPUPerSyncUS)
		}
		for _, path := range slices.Sorted(maps.Keys(e.X402StageMS)) {
			fmt.Fprintf(stdout, "%s: an x402 payment %s, on slots of %s, %s\n", e.DB, path, f.x402Slot, stageLine(e.X402StageMS[path]))
		}
	}
	fmt.Fprintf(stdout, "%s, %d clients, %d wallets, %d agents\n", rep.Machine, f.clients, f.wallets, f.agents)
	if f.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(f.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if f.svgOut != "" {
		if err := os.WriteFile(f.svgOut, []byte(chart(rep)), 0o644); err != nil {
			return err
		}
	}
	return nil
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

// benchEngine measures one marketplace, on the engine of db: it seeds the
// store, starts crtxd serve on it, lists the stub as --agents agents,
// funds --wallets wallets, and runs the marketplace's scenarios.
func benchEngine(ctx context.Context, f benchFlags, db string, skey ed25519.PrivateKey, stubURL, slowURL string,
	gen *loadClient, record func(result), stderr io.Writer) (engineFigures, error) {
	figures := engineFigures{DB: engineName(db)}
	run := func(r result) { r.Engine = figures.DB; record(r) }
	cfg, token, cleanup, err := benchStore(ctx, db)
	if err != nil {
		return figures, err
	}
	defer cleanup()
	// Seed the store before the marketplace starts: the catalog and the
	// wallet's past executions.
	fmt.Fprintf(stderr, "%s: seeding %d agents and %d executions…\n", figures.DB, f.catalog, f.execs)
	seedKey, err := seed(ctx, cfg, f.catalog, f.execs)
	if err != nil {
		return figures, fmt.Errorf("seed: %w", err)
	}
	serve := func(addr, pprofAddr string) (*exec.Cmd, func(), error) {
		return benchServe(ctx, f, cfg, token, addr, pprofAddr, stderr)
	}
	addr, pprofAddr := freeAddr(), freeAddr()
	child, stop, err := serve(addr, pprofAddr)
	if err != nil {
		return figures, err
	}
	defer stop()
	base := "http://" + addr
	agents, keys, err := benchParties(ctx, base, f, skey, stubURL, crtx.Devnet, 0)
	if err != nil {
		return figures, err
	}
	completed := []byte(`"status":"completed"`)
	// Client c pays from wallet c mod --wallets and calls agent c mod --agents.
	executeURL := func(c int) string { return base + "/v1/agents/" + agents[c%len(agents)] + "/execute" }
	key := func(c int) string { return keys[c%len(keys)] }
	syncOn := func(url func(c int) string) func(c int) error {
		return func(c int) error {
			return gen.call("POST", url(c), key(c), `{"task":"t"}`, 200, func(b []byte) error {
				if !bytes.Contains(b, completed) {
					return fmt.Errorf("not completed: %.200s", b)
				}
				return nil
			})
		}
	}
	syncExec := syncOn(executeURL)
	// profile fetches the marketplace's CPU profile while the scenario
	// runs, when it is the one --profile names; stop waits for the file.
	profile := func(scenario string) (stop func() error) {
		if f.cpuprofile == "" || scenario != f.profiled {
			return func() error { return nil }
		}
		done := make(chan error, 1)
		go func() {
			secs := max(int(f.dur.Seconds())-1, 1)
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs))
			if err != nil {
				done <- err
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			done <- os.WriteFile(f.cpuprofile, b, 0o644)
		}()
		return func() error {
			if err := <-done; err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			return nil
		}
	}
	if f.want("sync") {
		stop := profile("sync")
		w0 := writerStats(base)
		cpu0 := cpuTime(child.Process.Pid)
		r := load("sync executions", f.clients, f.dur, syncExec)
		run(r)
		if r.OK > 0 {
			figures.CPUPerSyncUS = float64((cpuTime(child.Process.Pid) - cpu0).Microseconds()) / float64(r.OK)
			fmt.Fprintf(stderr, "%-44s %8.0f µs of marketplace CPU an execution\n", "", figures.CPUPerSyncUS)
		}
		if w1 := writerStats(base); w1.Commits > w0.Commits && r.OK > 0 {
			figures.TxPerCommit = float64(w1.Transactions-w0.Transactions) / float64(w1.Commits-w0.Commits)
			figures.WriterPerSyncUS = float64((w1.Busy - w0.Busy).Microseconds()) / float64(r.OK)
			fmt.Fprintf(stderr, "%-44s %8.1f transactions a commit\n", "", figures.TxPerCommit)
			fmt.Fprintf(stderr, "%-44s %8.0f µs of the group writer an execution (busy %.0f %% of the time)\n", "",
				figures.WriterPerSyncUS, 100*(w1.Busy-w0.Busy).Seconds()/r.Seconds)
		}
		if err := stop(); err != nil {
			return figures, err
		}
	}
	if f.want("sync") && f.replicas > 1 && db != "sqlite" {
		// The same load spread over replicas of one database: client c
		// calls replica c mod --replicas, the first being the one above.
		bases := []string{base}
		var stops []func()
		stopAll := func() {
			for _, stop := range stops {
				stop()
			}
			stops = nil
		}
		defer stopAll()
		for range f.replicas - 1 {
			addr := freeAddr()
			_, stop, err := serve(addr, freeAddr())
			if err != nil {
				return figures, err
			}
			stops = append(stops, stop)
			bases = append(bases, "http://"+addr)
		}
		on := func(c int) string { return bases[c%len(bases)] + "/v1/agents/" + agents[c%len(agents)] + "/execute" }
		run(load(fmt.Sprintf("sync executions, %d replicas", f.replicas), f.clients, f.dur, syncOn(on)))
		stopAll()
	}
	asyncExec := func(c int) error {
		var rec struct {
			ID string `json:"execution_id"`
		}
		err := gen.call("POST", executeURL(c), key(c), `{"task":"t","async":true}`, 202, func(b []byte) error { return json.Unmarshal(b, &rec) })
		if err != nil {
			return err
		}
		for {
			done := false
			err := gen.call("GET", base+"/v1/executions/"+rec.ID, key(c), "", 200, func(b []byte) error {
				if bytes.Contains(b, []byte(`"status":"failed"`)) {
					return fmt.Errorf("failed: %.200s", b)
				}
				done = bytes.Contains(b, completed)
				return nil
			})
			if err != nil || done {
				return err
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	if f.want("async") {
		stop := profile("async")
		run(load("async executions, submit to final", f.clients, f.dur, asyncExec))
		if err := stop(); err != nil {
			return figures, err
		}
	}
	// Latency at a fixed rate: the marketplace's p50 over the proxy's.
	if f.want("paced") {
		stop := profile("paced")
		run(paced(fmt.Sprintf("sync executions at %d/s", f.rate), f.rate, f.dur, syncExec))
		if err := stop(); err != nil {
			return figures, err
		}
	}
	if slowURL != "" {
		if err := benchSlow(ctx, f, cfg, base, pprofAddr, child.Process.Pid, skey, slowURL, gen, run, stderr); err != nil {
			return figures, fmt.Errorf("slow: %w", err)
		}
	}
	// The write scenarios leave work behind (blocks to seal, credits to
	// roll up, WAL to copy back); the read scenarios measure reads alone,
	// once the marketplace is idle again.
	figures.SettleSeconds = settle(child.Process.Pid, time.Minute).Seconds()
	fmt.Fprintf(stderr, "%-44s %8.1f s until the marketplace was idle\n", "", figures.SettleSeconds)
	reads := []struct{ scenario, name, url, key string }{
		// The floor of any request to this server on this machine: no handler work.
		{"healthz", "GET /healthz", base + "/healthz", ""},
		{"agents", fmt.Sprintf("GET /v1/agents over %d agents", f.catalog), base + "/v1/agents?tags=sql&sort=price_asc", ""},
		{"executions", fmt.Sprintf("GET /v1/executions of %d", f.execs), base + "/v1/executions", seedKey},
	}
	for _, rd := range reads {
		if !f.want(rd.scenario) {
			continue
		}
		stop := profile(rd.scenario)
		run(load(rd.name, f.clients, f.dur, func(int) error { return gen.call("GET", rd.url, rd.key, "", 200, nil) }))
		if err := stop(); err != nil {
			return figures, err
		}
	}
	figures.PeakRSSMB = peakRSS(child.Process.Pid)
	return figures, nil
}

// benchStore makes a store of its own on the engine of db, and the
// operator's token file; cleanup removes both.
func benchStore(ctx context.Context, db string) (cfg daemon.Config, token string, cleanup func(), err error) {
	data, err := os.MkdirTemp("", "crtx-bench")
	if err != nil {
		return cfg, "", nil, err
	}
	cleanup = func() { os.RemoveAll(data) }
	cfg = daemon.Defaults()
	cfg.Data = data
	token = filepath.Join(data, "admin-token")
	if err := os.WriteFile(token, []byte(benchAdminToken), 0o600); err != nil {
		cleanup()
		return cfg, "", nil, err
	}
	if db != "sqlite" {
		// A schema of its own, dropped afterwards: runs never see each
		// other's rows.
		schema, drop, err := benchSchema(ctx, db)
		if err != nil {
			cleanup()
			return cfg, "", nil, err
		}
		cleanup = func() { drop(); os.RemoveAll(data) }
		sep := "?"
		if strings.Contains(db, "?") {
			sep = "&"
		}
		cfg.DB = db + sep + "search_path=" + schema
	}
	return cfg, token, cleanup, nil
}

// benchAdminToken is the operator's token of the marketplaces bench starts.
const benchAdminToken = "bench-admin-token-0123456789abcdef"

// benchServe starts a marketplace (crtxd serve, with extra flags) on the
// store of cfg and waits until it is ready.
func benchServe(ctx context.Context, f benchFlags, cfg daemon.Config, token, addr, pprofAddr string, stderr io.Writer, extra ...string) (child *exec.Cmd, stop func(), err error) {
	self, _ := os.Executable()
	child = exec.CommandContext(ctx, self, append([]string{"serve", "--addr", addr, "--data", cfg.Data, "--db", cfg.DB, "--db-conns", strconv.Itoa(f.dbConns),
		"--admin-token-file", token, "--allow-private-endpoints", "--log-level", "error", "--pprof-addr", pprofAddr,
		// Every wallet and creator of the run signs in from this one address.
		"--rate-limit-ip", "0"}, extra...)...)
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		return nil, nil, err
	}
	stop = func() { child.Process.Signal(os.Interrupt); child.Wait() }
	if err := waitUp(ctx, "http://"+addr+"/readyz"); err != nil {
		stop()
		return nil, nil, fmt.Errorf("crtxd: %w", err)
	}
	return child, stop, nil
}

// benchParties lists the stub as --agents agents, each by a creator of its
// own, with a timeout of timeout seconds (0: the default), and funds
// --wallets wallets with an API key each in env; it returns the agents' ids
// and the keys.
func benchParties(ctx context.Context, base string, f benchFlags, skey ed25519.PrivateKey, stubURL string, env crtx.Environment, timeout int) (agents, keys []string, err error) {
	admin := client.New(base, benchAdminToken)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtx.USDC(1000), []string{"data"}
	pub := crtx.Address(skey.Public().(ed25519.PublicKey))
	var secs *int
	if timeout > 0 {
		secs = &timeout
	}
	// party is a new wallet holding amount in env, signed in.
	party := func(env crtx.Environment, amount crtx.USDC) (*client.Client, error) {
		_, k, _ := ed25519.GenerateKey(nil)
		if _, err := admin.Deposit(ctx, env, crtx.Address(k.Public().(ed25519.PublicKey)), amount); err != nil {
			return nil, err
		}
		s, _, err := client.New(base, "").SignIn(ctx, k)
		return s, err
	}
	for range f.agents {
		cs, err := party(crtx.Mainnet, 1000*crtx.MicroPerUSDC)
		if err != nil {
			return nil, nil, err
		}
		a, err := cs.WithAgentKey(skey).CreateListing(ctx, crtx.ListingParams{Name: str("Stub"), Tagline: str("Answers at once."), Description: str("Benchmark stub."),
			Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
			Price: &price, EndpointURL: &stubURL, SigningPublicKey: &pub, TimeoutSeconds: secs})
		if err != nil {
			return nil, nil, err
		}
		agents = append(agents, a.AgentID)
	}
	for range f.wallets {
		us, err := party(env, 100_000_000*crtx.MicroPerUSDC)
		if err != nil {
			return nil, nil, err
		}
		k, err := us.CreateKey(ctx, client.KeyParams{Name: "bench", Environment: env})
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k.Key)
	}
	return agents, keys, nil
}

// benchSchema creates an empty schema on the PostgreSQL server at dsn.
func benchSchema(ctx context.Context, dsn string) (string, func(), error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", nil, err
	}
	name := "crtx_bench_" + strings.ToLower(crtx.RandomBase62(10))
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		db.Close()
		return "", nil, err
	}
	return name, func() {
		db.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
		db.Close()
	}, nil
}

// benchProxy runs the baseline: a plain reverse proxy on addr to target,
// until ctx ends ("crtxd bench proxy ADDR TARGET IDLE").
//
// Its Transport keeps as many idle connections to the stub as the load has
// clients (IDLE, crtxd bench passes --clients), as the marketplace's
// dispatcher keeps its own: with Go's default of two a closed loop of
// clients would reconnect on most requests, and the baseline would be
// slower than a proxy anyone would run.
func benchProxy(ctx context.Context, args []string) error {
	target, err := url.Parse(args[1])
	if err != nil {
		return err
	}
	idle, err := strconv.Atoi(args[2])
	if err != nil || idle < 1 {
		return errors.New("crtxd bench proxy: IDLE is a number of connections")
	}
	p := httputil.NewSingleHostReverseProxy(target)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, idle
	p.Transport = t
	return serveUntilDone(ctx, &http.Server{Addr: args[0], Handler: p})
}

// benchStub serves the stub creator on the creator SDK, signing with the
// key of the given hex seed: a throwaway key of one run, on loopback. Each
// answer comes after delay, as an agent that thinks for that long.
func benchStub(ctx context.Context, args []string, delay time.Duration) error {
	seed, err := hex.DecodeString(args[1])
	if err != nil || len(seed) != ed25519.SeedSize {
		return errors.New("crtxd bench stub: SEED is 32 bytes in hex")
	}
	if delay < 0 {
		return errors.New("crtxd bench stub: --delay must not be negative")
	}
	stub := creator.NewHandler(ed25519.NewKeyFromSeed(seed), func(ctx context.Context, r creator.Request) (string, int, error) {
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return "", 0, ctx.Err()
			}
		}
		return "ok " + r.Task, 1, nil
	}, creator.Options{})
	return serveUntilDone(ctx, &http.Server{Addr: args[0], Handler: stub})
}

// serveUntilDone serves until ctx ends.
func serveUntilDone(ctx context.Context, srv *http.Server) error {
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// waitUp waits until u answers HTTP, at most ten seconds, or until ctx
// ends.
func waitUp(ctx context.Context, u string) error {
	for i := 0; ; i++ {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return nil
		}
		if i > 100 {
			return fmt.Errorf("%s did not answer", u)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// metrics reads the marketplace's /metrics: each sample's value by its
// name and labels as written (`name{label="value"}`).
func metrics(base string) (map[string]float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			out[f[0]], _ = strconv.ParseFloat(f[1], 64)
		}
	}
	return out, nil
}

// writerStats reads the group writer's counters from /metrics; none when
// it does not answer.
func writerStats(base string) (w sqldb.WriterStats) {
	m, _ := metrics(base)
	w.Commits, w.Transactions = int64(m["crtx_store_commits_total"]), int64(m["crtx_store_transactions_total"])
	w.Busy = time.Duration(m["crtx_store_writer_busy_seconds_total"] * float64(time.Second))
	return w
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:18999"
	}
	defer ln.Close()
	return ln.Addr().String()
}

func machine() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	cpus := strings.Count(string(b), "processor\t:")
	return fmt.Sprintf("%d CPUs", cpus)
}

// settle waits, at most max, until the process uses under a tenth of a
// core, and reports how long that took.
func settle(pid int, max time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < max {
		c0 := cpuTime(pid)
		time.Sleep(250 * time.Millisecond)
		if cpuTime(pid)-c0 < 25*time.Millisecond {
			break
		}
	}
	return time.Since(start)
}

// cpuTime reads the user and system CPU time a process has used.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// peakRSS reads VmHWM, the resident set's high-water mark, of a process.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
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

// seed fills the store before the marketplace starts: n agents in the
// catalog, and m past executions of one wallet, whose devnet API key it
// returns.
func seed(ctx context.Context, cfg daemon.Config, n, m int) (string, error) {
	mk, store, err := daemon.OpenMarket(ctx, cfg, nil)
	if err != nil {
		return "", err
	}
	defer store.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	tagSets := [][]string{{"data"}, {"sql", "data"}, {"writing"}, {"code", "sql"}, {"research", "legal"}, {"finance"}}
	const batch = 5000
	for start := 0; start < max(n, 1); start += batch {
		err := store.Update(ctx, func(tx crtx.Tx) error {
			if err := tx.EnsureCreator(ctx, "bench-creator", now); err != nil {
				return err
			}
			for i := start; i < min(start+batch, max(n, 1)); i++ {
				a := crtx.Agent{ID: fmt.Sprintf("agt_bench%07d", i), Creator: "bench-creator", Name: fmt.Sprintf("Agent %d", i),
					Tagline: "A seeded agent.", Description: "Seeded for the benchmark.", Tags: tagSets[i%len(tagSets)],
					InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"string"}`),
					PricingModel: "pay_per_use", Price: crtx.USDC(1000 + i%5000), EndpointURL: "https://seeded.invalid/execute",
					SigningPublicKey: "seeded", TimeoutSeconds: 60, Status: crtx.AgentActive,
					CreatedAt: now.Add(-time.Duration(i) * time.Second), UpdatedAt: now}
				if err := tx.InsertAgent(ctx, a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	_, wk, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(wk.Public().(ed25519.PublicKey))
	key, secret, err := mk.Accounts.CreateKey(ctx, wallet, "bench history", crtx.Devnet, nil)
	if err != nil {
		return "", err
	}
	for start := 0; start < m; start += batch {
		err := store.Update(ctx, func(tx crtx.Tx) error {
			for i := start; i < min(start+batch, m); i++ {
				at := now.Add(-time.Duration(i) * time.Second)
				e := crtx.Execution{ID: crtx.NewUUID(), Environment: crtx.Devnet, Wallet: wallet, KeyID: key.ID, AgentID: "agt_bench0000000",
					AgentName: "Agent 0", Creator: "bench-creator", EndpointURL: "https://seeded.invalid/execute", SigningPublicKey: "seeded",
					Task: "seeded", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 60, Cost: 1000, CreatorAmount: 990, PlatformAmount: 10,
					Status: crtx.ExecCompleted, InitiatedAt: at, CompletedAt: &at, Deadline: at, LeaseUntil: at}
				if err := tx.InsertExecution(ctx, e); err != nil {
					return err
				}
				// Counted against the key, as a charge counts it.
				if err := tx.AddKeyUsage(ctx, key.ID, e.Cost); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return secret, nil
}
