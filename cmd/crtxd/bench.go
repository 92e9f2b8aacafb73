package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/daemon"
	"github.com/spf13/cobra"
)

// scenarios are the names --only takes.
var scenarios = []string{"stub", "proxy", "sync", "async", "paced", "slow", "fair", "stream", "held", "healthz", "agents", "executions", "x402"}

// optIn are the scenarios that run only when --only names them: the slow
// ones take minutes (held thousands of connections), and x402 a local
// Solana network on Node.js.
var optIn = []string{"slow", "fair", "held", "x402"}

// profiled are the scenarios --profile takes: the marketplace's, but the
// opt-in ones.
func profiled() []string {
	return slices.DeleteFunc(slices.Clone(scenarios[2:]), func(s string) bool { return slices.Contains(optIn, s) })
}

// benchFlags are crtxd bench's settings.
type benchFlags struct {
	clients, catalog, execs, wallets, agents, rate int
	streamRate                                     int
	replicas, dbConns                              int
	dur, x402Slot                                  time.Duration
	slow, held                                     slowFlags
	db, only, jsonOut, svgOut                      string
	dbs                                            []string
	cpuprofile, profiled, heapprofile              string
	// trust is a certificate the marketplace trusts: the held stub's.
	trust string
	want  func(scenario string) bool
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
	fs.StringVar(&f.profiled, "profile", "sync", "the scenario --cpuprofile profiles: "+strings.Join(profiled(), ", "))
	fs.StringVar(&f.only, "only", "", "run only these scenarios, comma-separated: "+strings.Join(scenarios, ", ")+" ("+strings.Join(optIn, ", ")+" run only when named)")
	fs.StringVar(&f.heapprofile, "heapprofile", "", "write the marketplace's heap profile, when the slow scenario has the most calls in flight, to this file (and the held scenario's, when it holds the most streams, to held-FILE)")
	fs.IntVar(&f.slow.calls, "slow-calls", 10_000, "synchronous calls the slow scenario starts")
	fs.IntVar(&f.slow.rate, "slow-rate", 1000, "calls a second the slow scenario starts")
	fs.DurationVar(&f.slow.delay, "slow-delay", 4*time.Second, "how long the slow scenarios' agent takes to answer")
	fs.IntVar(&f.streamRate, "stream-rate", 200, "streams a second of the stream scenario, each open "+streamHold.String()+" after its first delta")
	fs.IntVar(&f.held.calls, "held-streams", 10_000, "streams the held scenario opens")
	fs.IntVar(&f.held.rate, "held-rate", 1000, "streams a second the held scenario opens")
	fs.DurationVar(&f.held.delay, "held-for", 15*time.Second, "how long each of the held scenario's streams stays open after its first delta")
	fs.DurationVar(&f.x402Slot, "x402-slot", 400*time.Millisecond, "slot time of the x402 scenario's local Solana network (mainnet's is about 400ms)")
	var delay time.Duration
	var stream bool
	var tls [2]string
	stubCmd := &cobra.Command{
		Use: "stub ADDR SEED", Hidden: true, Args: cmdline.Args("ADDR", "SEED"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchStub(cmd.Context(), args, delay, stream, tls)
		},
	}
	stubCmd.Flags().DurationVar(&delay, "delay", 0, "answer each call after this long")
	stubCmd.Flags().StringVar(&tls[0], "cert", "", "serve HTTPS with this certificate (and --key)")
	stubCmd.Flags().StringVar(&tls[1], "key", "", "the key of --cert")
	stubCmd.Flags().BoolVar(&stream, "stream", false, "stream the answers asked for as a stream: the first piece at once, the last after --delay")
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
	if err := f.held.check(); err != nil || f.streamRate < 1 {
		return errors.New("--held-streams, --held-rate and --stream-rate must be at least 1, --held-for more than 0")
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
	if !slices.Contains(profiled(), f.profiled) {
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
	// The stream scenarios' agents are stubs that stream, holding each
	// stream open for a while after its first piece; the held scenario's
	// serves HTTPS (benchCert).
	var streamURL, heldURL string
	if f.want("stream") {
		addr := freeAddr()
		stop, err := started("stub", addr, hex.EncodeToString(skey.Seed()), "--stream", "--delay", streamHold.String())
		if err != nil {
			return err
		}
		defer stop()
		streamURL = "http://" + addr + "/execute"
	}
	if f.want("held") {
		dir, err := os.MkdirTemp("", "crtx-bench-tls")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cert, key, err := benchCert(dir)
		if err != nil {
			return err
		}
		addr := freeAddr()
		stop, err := started("stub", addr, hex.EncodeToString(skey.Seed()), "--stream", "--delay", f.held.delay.String(), "--cert", cert, "--key", key)
		if err != nil {
			return err
		}
		defer stop()
		heldURL, f.trust = "https://"+addr+"/execute", cert
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
	if streamURL != "" {
		run(streamDirect(f, gen, streamURL))
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
			if figures, err = benchEngine(ctx, f, db, skey, stubURL, slowURL, streamURL, heldURL, gen, run, stderr); err != nil {
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
