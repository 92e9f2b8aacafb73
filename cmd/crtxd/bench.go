package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
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
	// CPUPerSyncUS is the marketplace's CPU time (user and system) per
	// synchronous execution, which throughput on a shared machine hides.
	CPUPerSyncUS float64 `json:"cpu_us_per_sync_execution"`
	// SettleSeconds is how long the marketplace stayed busy after the
	// write scenarios (sealing their ledger transactions, mostly).
	SettleSeconds float64 `json:"settle_seconds"`
}

// load runs clients closed loops of fn for d, or until n requests when n > 0.
func load(name string, clients int, d time.Duration, n int64, fn func() error) result {
	var ok, errs, sent atomic.Int64
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) && (n == 0 || sent.Add(1) <= n) {
				t0 := time.Now()
				if err := fn(); err != nil {
					errs.Add(1)
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := result{Name: name, Clients: clients, Seconds: elapsed.Seconds(), OK: ok.Load(), Errors: errs.Load(),
		RPS: float64(ok.Load()) / elapsed.Seconds()}
	if len(all) > 0 {
		ms := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))].Microseconds()) / 1000 }
		r.P50MS, r.P99MS, r.MaxMS = ms(0.5), ms(0.99), float64(all[len(all)-1].Microseconds())/1000
	}
	return r
}

// bench starts a stub creator, the marketplace (a crtxd serve child) with
// the stub listed, and a plain reverse proxy to the stub, and measures them
// side by side with closed loops of concurrent clients.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	cpuprofile := fs.String("cpuprofile", "", "write the marketplace's CPU profile during the sync scenario to this file")
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	data, err := os.MkdirTemp("", "crtx-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)

	// The stub creator, on the creator SDK.
	_, skey, _ := ed25519.GenerateKey(nil)
	stub := creator.NewHandler(skey, func(_ context.Context, r creator.Request) (string, int, error) {
		return "ok " + r.Task, 1, nil
	}, creator.Options{Remember: 1 << 20})
	stubLn, _ := net.Listen("tcp", "127.0.0.1:0")
	go http.Serve(stubLn, stub)
	stubURL := "http://" + stubLn.Addr().String() + "/execute"
	proxyLn, _ := net.Listen("tcp", "127.0.0.1:0")
	target, _ := url.Parse("http://" + stubLn.Addr().String())
	go http.Serve(proxyLn, httputil.NewSingleHostReverseProxy(target))
	proxyURL := "http://" + proxyLn.Addr().String() + "/execute"

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
	self, _ := os.Executable()
	addr, pprofAddr := freeAddr(), freeAddr()
	child := exec.CommandContext(ctx, self, "serve", "--addr", addr, "--data", data, "--db", *db, "--admin-token-file", token,
		"--allow-private-endpoints", "--log-level", "error", "--max-dispatches", "4096", "--pprof-addr", pprofAddr)
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		return err
	}
	defer func() { child.Process.Signal(os.Interrupt); child.Wait() }()
	base := "http://" + addr
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			return fmt.Errorf("crtxd did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	bctx := ctx
	admin := client.New(base, "bench-admin-token-0123456789abcdef")
	_, ck, _ := ed25519.GenerateKey(nil)
	_, uk, _ := ed25519.GenerateKey(nil)
	cw, uw := crtx.Address(ck.Public().(ed25519.PublicKey)), crtx.Address(uk.Public().(ed25519.PublicKey))
	if _, err := admin.Deposit(bctx, crtx.Mainnet, cw, 1000*crtx.MicroPerUSDC); err != nil {
		return err
	}
	if _, err := admin.Deposit(bctx, crtx.Devnet, uw, 100_000_000*crtx.MicroPerUSDC); err != nil {
		return err
	}
	cs, _, err := client.New(base, "").SignIn(bctx, ck)
	if err != nil {
		return err
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtx.USDC(1000), []string{"data"}
	pub := stub.PublicKey()
	a, err := cs.CreateListing(bctx, crtx.ListingParams{Name: str("Stub"), Tagline: str("Answers at once."), Description: str("Benchmark stub."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: &stubURL, SigningPublicKey: &pub})
	if err != nil {
		return err
	}
	us, _, err := client.New(base, "").SignIn(bctx, uk)
	if err != nil {
		return err
	}
	k, err := us.CreateKey(bctx, client.KeyParams{Name: "bench", Environment: crtx.Devnet})
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients * 2}}
	// Every scenario sends raw requests and reads the raw answer, as the
	// proxy scenario does, so that the load generator's own JSON work
	// (which shares these cores) is neither counted as the marketplace's
	// latency nor taken from its CPU; answers are still checked.
	bufs := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	// call sends a request and hands the answer to check (when not nil),
	// reading it into a pooled buffer: the generator allocates little, so
	// its garbage collections do not add to the latencies it measures.
	call := func(method, u, key, body string, want int, check func([]byte) error) error {
		req, _ := http.NewRequestWithContext(bctx, method, u, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		buf := bufs.Get().(*bytes.Buffer)
		defer bufs.Put(buf)
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			return err
		case resp.StatusCode != want:
			return fmt.Errorf("status %d: %.200s", resp.StatusCode, buf.Bytes())
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
			resp, err := hc.Post(u, "application/json", bytes.NewReader(body))
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
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
		rep.Results = append(rep.Results, r)
		fmt.Fprintf(stderr, "%-34s %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  errors %d\n", r.Name, r.RPS, r.P50MS, r.P99MS, r.Errors)
	}
	run(load("stub alone", *clients, *dur, 0, direct(stubURL)))
	run(load("reverse proxy to the stub", *clients, *dur, 0, direct(proxyURL)))
	profiled := make(chan error, 1)
	if *cpuprofile != "" {
		go func() {
			secs := max(int(dur.Seconds())-1, 1)
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs))
			if err != nil {
				profiled <- err
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			profiled <- os.WriteFile(*cpuprofile, b, 0o644)
		}()
	}
	c0, t0 := commitCounts(base)
	cpu0 := cpuTime(child.Process.Pid)
	run(load("sync executions", *clients, *dur, 0, syncExec))
	if r := rep.Results[len(rep.Results)-1]; r.OK > 0 {
		rep.CPUPerSyncUS = float64((cpuTime(child.Process.Pid) - cpu0).Microseconds()) / float64(r.OK)
		fmt.Fprintf(stderr, "%-34s %8.0f µs of marketplace CPU an execution\n", "", rep.CPUPerSyncUS)
	}
	if c1, t1 := commitCounts(base); c1 > c0 {
		rep.TxPerCommit = float64(t1-t0) / float64(c1-c0)
		fmt.Fprintf(stderr, "%-34s %8.1f transactions a commit\n", "", rep.TxPerCommit)
	}
	if *cpuprofile != "" {
		if err := <-profiled; err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
	}
	run(load("async executions, submit to final", *clients, *dur, 0, func() error {
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
	}))
	// Latency at a fixed rate: the marketplace's p50 over the proxy's.
	paced := func(name string, fn func() error) result {
		interval := time.Second / time.Duration(*rate)
		var mu sync.Mutex
		var lat []time.Duration
		var errs int64
		var wg sync.WaitGroup
		start := time.Now()
		for i := 0; time.Since(start) < *dur; i++ {
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
		slices.Sort(lat)
		r := result{Name: name, Clients: 0, Seconds: time.Since(start).Seconds(), OK: int64(len(lat)), Errors: errs}
		r.RPS = float64(r.OK) / r.Seconds
		if len(lat) > 0 {
			r.P50MS = float64(lat[len(lat)/2].Microseconds()) / 1000
			r.P99MS = float64(lat[len(lat)*99/100].Microseconds()) / 1000
			r.MaxMS = float64(lat[len(lat)-1].Microseconds()) / 1000
		}
		return r
	}
	run(paced(fmt.Sprintf("proxy at %d/s", *rate), direct(proxyURL)))
	run(paced(fmt.Sprintf("sync executions at %d/s", *rate), syncExec))
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
	// The floor of any request to this server on this machine: no handler work.
	run(load("GET /healthz", *clients, *dur, 0, get(base+"/healthz", "")))
	run(load(fmt.Sprintf("GET /v1/agents over %d agents", *agents), *clients, *dur, 0,
		get(base+"/v1/agents?tags=sql&sort=price_asc", "")))
	run(load(fmt.Sprintf("GET /v1/executions of %d", *execs), *clients, *dur, 0, get(base+"/v1/executions", seedKey)))
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

// commitCounts reads the group writer's counters from /metrics.
func commitCounts(base string) (commits, txs int64) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, 0
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
			commits = int64(v)
		case "crtx_store_transactions_total":
			txs = int64(v)
		}
	}
	return commits, txs
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
	_, secret, err := mk.CreateKey(ctx, wallet, "bench history", crtx.Devnet, nil)
	if err != nil {
		return "", err
	}
	for start := 0; start < m; start += batch {
		err := store.Update(ctx, func(tx crtx.Tx) error {
			for i := start; i < min(start+batch, m); i++ {
				at := now.Add(-time.Duration(i) * time.Second)
				e := crtx.Execution{ID: crtx.NewUUID(), Environment: crtx.Devnet, Wallet: wallet, KeyID: "seeded", AgentID: "agt_bench0000000",
					AgentName: "Agent 0", Creator: "bench-creator", EndpointURL: "https://seeded.invalid/execute", SigningPublicKey: "seeded",
					Task: "seeded", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 60, Cost: 1000, CreatorAmount: 990, PlatformAmount: 10,
					Status: crtx.ExecCompleted, InitiatedAt: at, CompletedAt: &at, Deadline: at, LeaseUntil: at}
				if err := tx.InsertExecution(ctx, e); err != nil {
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
