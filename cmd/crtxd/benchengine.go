package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

// benchEngine measures one marketplace, on the engine of db: it seeds the
// store, starts crtxd serve on it, lists the stub as --agents agents,
// funds --wallets wallets, and runs the marketplace's scenarios.
func benchEngine(ctx context.Context, f benchFlags, db string, skey ed25519.PrivateKey, stubURL, slowURL, streamURL, heldURL string,
	gen *loadClient, record func(result), stderr io.Writer) (engineFigures, error) {
	figures := engineFigures{DB: engineName(db)}
	run := func(r result) { r.Engine = figures.DB; record(r) }
	cfg, token, cleanup, err := benchStore(ctx, db)
	if err != nil {
		return figures, err
	}
	defer cleanup()
	if f.want("held") {
		// Each environment keeps a quarter of the dispatch slots the other
		// may not take: the held streams, all of one environment, need
		// their count and a third again.
		cfg.MaxDispatches = max(cfg.MaxDispatches, f.held.calls*4/3+1)
	}
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
	if streamURL != "" || heldURL != "" {
		if err := benchStreams(ctx, f, cfg, base, pprofAddr, child.Process.Pid, skey, streamURL, heldURL, run, profile, stderr); err != nil {
			return figures, fmt.Errorf("streams: %w", err)
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

// benchServe starts a marketplace (crtxd serve, with extra flags) on the
// store of cfg and waits until it is ready.
func benchServe(ctx context.Context, f benchFlags, cfg daemon.Config, token, addr, pprofAddr string, stderr io.Writer, extra ...string) (child *exec.Cmd, stop func(), err error) {
	self, _ := os.Executable()
	child = exec.CommandContext(ctx, self, append([]string{"serve", "--addr", addr, "--data", cfg.Data, "--db", cfg.DB, "--db-conns", strconv.Itoa(f.dbConns),
		"--max-dispatches", strconv.Itoa(cfg.MaxDispatches),
		"--admin-token-file", token, "--allow-private-endpoints", "--log-level", "error", "--pprof-addr", pprofAddr,
		// Every wallet and creator of the run signs in from this one address.
		"--rate-limit-ip", "0"}, extra...)...)
	child.Stderr = stderr
	if f.trust != "" {
		child.Env = append(os.Environ(), "SSL_CERT_FILE="+f.trust)
	}
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
