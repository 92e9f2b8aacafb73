package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// result is one scenario's figures.
type result struct {
	Name    string  `json:"name"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	OK      int64   `json:"ok"`
	Errors  int64   `json:"errors"`
	RPS     float64 `json:"rps"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	MaxMS   float64 `json:"max_ms"`
}

// report is what a run of crtxd bench writes with --json.
type report struct {
	Machine   string   `json:"machine"`
	DB        string   `json:"db"`
	Results   []result `json:"results"`
	PeakRSSMB float64  `json:"marketplace_peak_rss_mib"`
	// TxPerCommit is the group writer's mean group during the sync
	// scenario (SQLite).
	TxPerCommit float64 `json:"transactions_per_commit,omitempty"`
	// WriterPerSyncUS is the group writer's busy time per synchronous
	// execution: one writer, so 1e6 / WriterPerSyncUS bounds executions/s.
	WriterPerSyncUS float64 `json:"writer_us_per_sync_execution,omitempty"`
	// CPUPerSyncUS is the marketplace's CPU time (user and system) per
	// synchronous execution, which throughput on a shared machine hides.
	CPUPerSyncUS float64 `json:"cpu_us_per_sync_execution"`
	// SettleSeconds is how long the marketplace stayed busy after the
	// write scenarios (sealing their ledger transactions, mostly).
	SettleSeconds float64 `json:"settle_seconds"`
}

// scenarios are the names --only takes; --profile takes those of the
// marketplace (all but the first two).
var scenarios = []string{"stub", "proxy", "sync", "async", "paced", "healthz", "agents", "executions"}

// load runs clients closed loops of fn for d.
func load(name string, clients int, d time.Duration, fn func() error) result {
	var errs atomic.Int64
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := fn(); err != nil {
					errs.Add(1)
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	return summarize(name, clients, time.Since(start), slices.Concat(lat...), errs.Load())
}

// paced starts fn rate times a second for d, whatever the answers' pace.
func paced(name string, rate int, d time.Duration, fn func() error) result {
	interval := time.Second / time.Duration(rate)
	var mu sync.Mutex
	var lat []time.Duration
	var errs int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Go(func() {
			t0 := time.Now()
			err := fn()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				return
			}
			lat = append(lat, time.Since(t0))
		})
	}
	wg.Wait()
	return summarize(name, 0, time.Since(start), lat, errs)
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

// bench starts a stub creator, the marketplace (a crtxd serve child) with
// the stub listed, and a plain reverse proxy to the stub, and measures them
// side by side with closed loops of concurrent clients.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "proxy" {
		return benchProxy(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "stub" {
		return benchStub(ctx, args[1:])
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clients := fs.Int("clients", 64, "concurrent clients of each scenario")
	dur := fs.Duration("duration", 10*time.Second, "how long each scenario runs")
	db := fs.String("db", "", "postgres://… to measure PostgreSQL (default SQLite)")
	agents := fs.Int("agents", 100_000, "agents in the catalog for the browse scenario")
	execs := fs.Int("executions", 100_000, "executions of the wallet for the list scenario")
	jsonOut := fs.String("json", "", "write the figures as JSON to this file")
	svgOut := fs.String("svg", "", "draw the figures as an SVG chart to this file")
	rate := fs.Int("rate", 500, "executions per second of the latency-at-rate scenario")
	cpuprofile := fs.String("cpuprofile", "", "write the marketplace's CPU profile during one scenario (--profile) to this file")
	profiled := fs.String("profile", "sync", "the scenario --cpuprofile profiles: "+strings.Join(scenarios[2:], ", "))
	only := fs.String("only", "", "run only these scenarios, comma-separated: "+strings.Join(scenarios, ", "))
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	// This process is the load generator (and the stub): its own garbage
	// collections would count in the latencies it measures, so it collects
	// less often, as crtxd serve does by default. The servers measured (the
	// marketplace, the proxy) are processes of their own with their own
	// settings.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	picked := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			if !slices.Contains(scenarios, name) {
				return fmt.Errorf("--only: no scenario %q", name)
			}
			picked[name] = true
		}
	}
	if !slices.Contains(scenarios[2:], *profiled) {
		return fmt.Errorf("--profile: no marketplace scenario %q", *profiled)
	}
	// want says whether to run a scenario: all of them unless --only names some.
	want := func(name string) bool { return len(picked) == 0 || picked[name] }
	data, err := os.MkdirTemp("", "crtx-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)

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
		if err := waitUp("http://" + addr + "/"); err != nil {
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
	stopProxy, err := started("proxy", proxyAddr, "http://"+stubAddr)
	if err != nil {
		return err
	}
	defer stopProxy()
	stubURL, proxyURL := "http://"+stubAddr+"/execute", "http://"+proxyAddr+"/execute"

	// Seed the store before the marketplace starts: the catalog and the
	// wallet's past executions.
	fmt.Fprintf(stderr, "seeding %d agents and %d executions…\n", *agents, *execs)
	cfg := daemon.Defaults()
	cfg.Data, cfg.DB = data, *db
	seedKey, err := seed(ctx, cfg, *agents, *execs)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("bench-admin-token-0123456789abcdef"), 0o600)
	addr, pprofAddr := freeAddr(), freeAddr()
	child := exec.CommandContext(ctx, self, "serve", "--addr", addr, "--data", data, "--db", *db, "--admin-token-file", token,
		"--allow-private-endpoints", "--log-level", "error", "--max-dispatches", "4096", "--pprof-addr", pprofAddr)
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		return err
	}
	defer func() { child.Process.Signal(os.Interrupt); child.Wait() }()
	base := "http://" + addr
	if err := waitUp(base + "/readyz"); err != nil {
		return fmt.Errorf("crtxd: %w", err)
	}
	admin := client.New(base, "bench-admin-token-0123456789abcdef")
	_, ck, _ := ed25519.GenerateKey(nil)
	_, uk, _ := ed25519.GenerateKey(nil)
	cw, uw := crtx.Address(ck.Public().(ed25519.PublicKey)), crtx.Address(uk.Public().(ed25519.PublicKey))
	if _, err := admin.Deposit(ctx, crtx.Mainnet, cw, 1000*crtx.MicroPerUSDC); err != nil {
		return err
	}
	if _, err := admin.Deposit(ctx, crtx.Devnet, uw, 100_000_000*crtx.MicroPerUSDC); err != nil {
		return err
	}
	cs, _, err := client.New(base, "").SignIn(ctx, ck)
	if err != nil {
		return err
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtx.USDC(1000), []string{"data"}
	pub := crtx.Address(skey.Public().(ed25519.PublicKey))
	a, err := cs.CreateListing(ctx, crtx.ListingParams{Name: str("Stub"), Tagline: str("Answers at once."), Description: str("Benchmark stub."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &stubURL, SigningPublicKey: &pub})
	if err != nil {
		return err
	}
	us, _, err := client.New(base, "").SignIn(ctx, uk)
	if err != nil {
		return err
	}
	k, err := us.CreateKey(ctx, client.KeyParams{Name: "bench", Environment: crtx.Devnet})
	if err != nil {
		return err
	}
	// Every scenario sends raw requests and reads the raw answer, so that
	// the load generator's own work (which shares these cores) is neither
	// counted as the servers' latency nor taken from their CPU; answers
	// are still checked.
	gen := newLoadClient()
	defer gen.reset()
	bufs := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	// call sends a request and hands the answer to check (when not nil),
	// reading it into a pooled buffer: the generator allocates little, so
	// its garbage collections do not add to the latencies it measures.
	call := func(method, u, key, body string, want int, check func([]byte) error) error {
		buf := bufs.Get().(*bytes.Buffer)
		defer bufs.Put(buf)
		buf.Reset()
		status, err := gen.do(method, u, key, body, buf)
		switch {
		case err != nil:
			return err
		case status != want:
			return fmt.Errorf("status %d: %.200s", status, buf.Bytes())
		case check != nil:
			return check(buf.Bytes())
		}
		return nil
	}
	completed := []byte(`"status":"completed"`)
	executeURL := base + "/v1/agents/" + a.AgentID + "/execute"
	direct := func(u string) func() error {
		return func() error {
			body, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 30})
			return call("POST", u, "", string(body), 200, nil)
		}
	}
	syncExec := func() error {
		return call("POST", executeURL, k.Key, `{"task":"t"}`, 200, func(b []byte) error {
			if !bytes.Contains(b, completed) {
				return fmt.Errorf("not completed: %.200s", b)
			}
			return nil
		})
	}
	rep := report{Machine: machine(), DB: map[bool]string{true: "postgres", false: "sqlite"}[*db != ""]}
	run := func(r result) {
		gen.reset()
		rep.Results = append(rep.Results, r)
		fmt.Fprintf(stderr, "%-34s %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  errors %d\n", r.Name, r.RPS, r.P50MS, r.P99MS, r.Errors)
	}
	// profile fetches the marketplace's CPU profile while the scenario
	// runs, when it is the one --profile names; stop waits for the file.
	profile := func(scenario string) (stop func() error) {
		if *cpuprofile == "" || scenario != *profiled {
			return func() error { return nil }
		}
		done := make(chan error, 1)
		go func() {
			secs := max(int(dur.Seconds())-1, 1)
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs))
			if err != nil {
				done <- err
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			done <- os.WriteFile(*cpuprofile, b, 0o644)
		}()
		return func() error {
			if err := <-done; err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			return nil
		}
	}
	if want("stub") {
		run(load("stub alone", *clients, *dur, direct(stubURL)))
	}
	if want("proxy") {
		run(load("reverse proxy to the stub", *clients, *dur, direct(proxyURL)))
	}
	if want("sync") {
		stop := profile("sync")
		w0 := writerStats(base)
		cpu0 := cpuTime(child.Process.Pid)
		r := load("sync executions", *clients, *dur, syncExec)
		run(r)
		if r.OK > 0 {
			rep.CPUPerSyncUS = float64((cpuTime(child.Process.Pid) - cpu0).Microseconds()) / float64(r.OK)
			fmt.Fprintf(stderr, "%-34s %8.0f µs of marketplace CPU an execution\n", "", rep.CPUPerSyncUS)
		}
		if w1 := writerStats(base); w1.Commits > w0.Commits && r.OK > 0 {
			rep.TxPerCommit = float64(w1.Transactions-w0.Transactions) / float64(w1.Commits-w0.Commits)
			rep.WriterPerSyncUS = float64((w1.Busy - w0.Busy).Microseconds()) / float64(r.OK)
			fmt.Fprintf(stderr, "%-34s %8.1f transactions a commit\n", "", rep.TxPerCommit)
			fmt.Fprintf(stderr, "%-34s %8.0f µs of the group writer an execution (busy %.0f %% of the time)\n", "",
				rep.WriterPerSyncUS, 100*(w1.Busy-w0.Busy).Seconds()/r.Seconds)
		}
		if err := stop(); err != nil {
			return err
		}
	}
	asyncExec := func() error {
		var rec struct {
			ID string `json:"execution_id"`
		}
		err := call("POST", executeURL, k.Key, `{"task":"t","async":true}`, 202, func(b []byte) error { return json.Unmarshal(b, &rec) })
		if err != nil {
			return err
		}
		for {
			done := false
			err := call("GET", base+"/v1/executions/"+rec.ID, k.Key, "", 200, func(b []byte) error {
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
	if want("async") {
		stop := profile("async")
		run(load("async executions, submit to final", *clients, *dur, asyncExec))
		if err := stop(); err != nil {
			return err
		}
	}
	// Latency at a fixed rate: the marketplace's p50 over the proxy's.
	if want("paced") {
		run(paced(fmt.Sprintf("proxy at %d/s", *rate), *rate, *dur, direct(proxyURL)))
		stop := profile("paced")
		run(paced(fmt.Sprintf("sync executions at %d/s", *rate), *rate, *dur, syncExec))
		if err := stop(); err != nil {
			return err
		}
	}
	get := func(u, key string) func() error {
		return func() error {
			return call("GET", u, key, "", 200, nil)
		}
	}
	// The write scenarios leave work behind (blocks to seal, WAL to copy
	// back); the read scenarios measure reads alone, once the marketplace
	// is idle again.
	rep.SettleSeconds = settle(child.Process.Pid, time.Minute).Seconds()
	fmt.Fprintf(stderr, "%-34s %8.1f s until the marketplace was idle\n", "", rep.SettleSeconds)
	reads := []struct{ scenario, name, url, key string }{
		// The floor of any request to this server on this machine: no handler work.
		{"healthz", "GET /healthz", base + "/healthz", ""},
		{"agents", fmt.Sprintf("GET /v1/agents over %d agents", *agents), base + "/v1/agents?tags=sql&sort=price_asc", ""},
		{"executions", fmt.Sprintf("GET /v1/executions of %d", *execs), base + "/v1/executions", seedKey},
	}
	for _, rd := range reads {
		if !want(rd.scenario) {
			continue
		}
		stop := profile(rd.scenario)
		run(load(rd.name, *clients, *dur, get(rd.url, rd.key)))
		if err := stop(); err != nil {
			return err
		}
	}
	rep.PeakRSSMB = peakRSS(child.Process.Pid)
	fmt.Fprintf(stdout, "\n%-34s %9s %9s %9s %9s %7s\n", "scenario", "req/s", "p50 ms", "p99 ms", "max ms", "errors")
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "%-34s %9.0f %9.2f %9.2f %9.2f %7d\n", r.Name, r.RPS, r.P50MS, r.P99MS, r.MaxMS, r.Errors)
	}
	fmt.Fprintf(stdout, "marketplace peak RSS: %.1f MiB (%s, %s)\n", rep.PeakRSSMB, rep.DB, rep.Machine)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, []byte(chart(rep)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchProxy runs the baseline: a plain reverse proxy on addr to target,
// until ctx ends ("crtxd bench proxy ADDR TARGET").
func benchProxy(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: crtxd bench proxy ADDR TARGET")
	}
	target, err := url.Parse(args[1])
	if err != nil {
		return err
	}
	return serveUntilDone(ctx, &http.Server{Addr: args[0], Handler: httputil.NewSingleHostReverseProxy(target)})
}

// benchStub serves the stub creator on the creator SDK, signing with the
// key of the given hex seed: a throwaway key of one run, on loopback.
func benchStub(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: crtxd bench stub ADDR SEED")
	}
	seed, err := hex.DecodeString(args[1])
	if err != nil || len(seed) != ed25519.SeedSize {
		return errors.New("crtxd bench stub: SEED is 32 bytes in hex")
	}
	stub := creator.NewHandler(ed25519.NewKeyFromSeed(seed), func(_ context.Context, r creator.Request) (string, int, error) {
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

// waitUp waits until u answers HTTP, at most ten seconds.
func waitUp(u string) error {
	for i := 0; ; i++ {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return nil
		}
		if i > 100 {
			return fmt.Errorf("%s did not answer", u)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writerStats reads the group writer's counters from /metrics.
func writerStats(base string) (w crtx.WriterStats) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return w
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "crtx_store_commits_total":
			w.Commits = int64(v)
		case "crtx_store_transactions_total":
			w.Transactions = int64(v)
		case "crtx_store_writer_busy_seconds_total":
			w.Busy = time.Duration(v * float64(time.Second))
		}
	}
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
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">crtxd bench — %s, %s; peak RSS %.0f MiB</text>`, r.DB, r.Machine, r.PeakRSSMB)
	var maxRPS, maxP99 float64
	for _, x := range r.Results {
		maxRPS, maxP99 = max(maxRPS, x.RPS), max(maxP99, x.P99MS)
	}
	for i, x := range r.Results {
		y := 40 + i*40
		w1 := int(300 * x.RPS / max(maxRPS, 1))
		w2 := int(200 * x.P99MS / max(maxP99, 1))
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`, y+14, x.Name)
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
	cfg.PublicURL = "http://127.0.0.1"
	mk, err := daemon.OpenMarket(ctx, cfg, nil)
	if err != nil {
		return "", err
	}
	defer mk.Store().Close()
	store := mk.Store()
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
	key, secret, err := mk.CreateKey(ctx, wallet, "bench history", crtx.Devnet, nil)
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
