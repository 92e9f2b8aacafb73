// Package daemon assembles crtxd from its parts (store, keys, market, HTTP
// server, background jobs) and runs it until its context ends. cmd/crtxd and
// the end-to-end tests start the marketplace the same way, through here.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/a2a"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
	crtxhttp "github.com/crtx-market/crtx/http"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/mcp"
	"github.com/crtx-market/crtx/openai"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/sqlite"
	"github.com/crtx-market/crtx/web"
	"github.com/prometheus/client_golang/prometheus"
)

// Daemon is a running crtxd.
type Daemon struct {
	Market *market.Market
	// Store is the store the market runs on, for tests and benchmarks that
	// write or verify beneath the service.
	Store crtx.Store
	URL   string
	// MetricsURL is where GET /metrics answers when Config.MetricsAddr is
	// set (its port chosen if MetricsAddr's was 0); empty otherwise.
	MetricsURL string
	cancel     context.CancelFunc
	done       chan error
	// admin is the admin token, read from adminFile again by
	// ReloadAdminToken.
	admin     *gate.Secret
	adminFile string
}

// ReloadAdminToken reads the admin token file again, as crtxd serve does
// on SIGHUP: from then on the admin API and the operator's pages take the
// new token alone, and operator sessions opened with the old one end. A
// file that cannot be read, or holds too short a token, leaves the old
// one in place. Without --admin-token-file there is nothing to reload:
// the admin API is not turned on by a signal.
func (d *Daemon) ReloadAdminToken() error {
	if d.adminFile == "" {
		return errors.New("no --admin-token-file: the admin API is off")
	}
	token, err := readAdminToken(d.adminFile)
	if err != nil {
		return err
	}
	d.admin.Set(token)
	return nil
}

// readAdminToken is the token in file, refused if too short to be safe
// from guessing.
func readAdminToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < crtxhttp.MinAdminToken {
		return "", fmt.Errorf("--admin-token-file: the token has %d characters and must have at least %d, so that it cannot be guessed; make one with: openssl rand -base64 32 > %s",
			len(token), crtxhttp.MinAdminToken, file)
	}
	return token, nil
}

// filesNeeded is how many open files dispatches calls in flight need: two
// each (the caller's connection and the one to the creator), and a margin
// for the database, the listeners, idle connections and logs.
func filesNeeded(dispatches int) uint64 { return 2*uint64(dispatches) + 1024 }

// Start listens on cfg.Addr, opens everything and serves in the background
// until ctx ends or Close is called.
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log, err := cfg.logger()
	if err != nil {
		return nil, err
	}
	token := ""
	if cfg.AdminTokenFile != "" {
		if token, err = readAdminToken(cfg.AdminTokenFile); err != nil {
			return nil, err
		}
	}
	admin := gate.NewSecret(token)
	unlock, alone := func() {}, false
	if !isPostgres(cfg.DB) {
		if unlock, alone, err = lockData(cfg.Data); err != nil {
			return nil, err
		}
	}
	if cfg.FreshStore {
		if err := emptyStore(ctx, cfg, alone); err != nil {
			unlock()
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		unlock()
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: another process listens there; choose another address with --addr (CRTX_ADDR), e.g. --addr 127.0.0.1:9090", err)
		}
		return nil, err
	}
	settings := cfg // as given: a public URL derived from each replica's address is no shared one
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + ln.Addr().String()
	}
	m, store, err := OpenMarket(ctx, cfg, log)
	if err != nil {
		ln.Close()
		unlock()
		return nil, err
	}
	fail := func(err error) (*Daemon, error) {
		ln.Close()
		store.Close()
		unlock()
		return nil, err
	}
	if err := markFresh(ctx, store, cfg.FreshStore); err != nil {
		return fail(err)
	}
	// Refused before anything its settings would make wrong (a treasury's
	// accounts created on the chain); recorded once it serves (below).
	joining := shared(settings, m.SigningPublicKey(), m.Config().NextSigner, m.Config().Chains)
	rotations := map[string]string{marketplaceKey: nextKey}
	if err := m.CanJoin(ctx, joining, alone, rotations); err != nil {
		return fail(err)
	}
	if err := ensureTreasuries(ctx, m.Config().Chains); err != nil {
		return fail(err)
	}
	// Past its open-file limit the process refuses connections (accept
	// fails) and fails calls (dial fails) long before its dispatch slots
	// run out: the operator is told now, not at the first peak.
	if limit, ok := openFileLimit(); ok {
		if need := filesNeeded(m.Config().MaxDispatches); limit < need {
			log.Warn("the open-file limit is below what --max-dispatches needs: raise the hard limit (ulimit -Hn, LimitNOFILE= under systemd) or lower --max-dispatches",
				"limit", limit, "needed", need, "max_dispatches", m.Config().MaxDispatches)
		}
	}
	var collectors []prometheus.Collector
	if db, ok := store.(interface{ WriterStats() sqldb.WriterStats }); ok { // SQLite's writer, PostgreSQL's batches
		collectors = sqlite.Collectors(db)
	}
	// One gate for every transport: a key's rate and streams are counted
	// alike on REST, MCP and A2A.
	g := gate.New(m, gate.Limits{PerIP: cfg.RateLimitIP, PerKey: cfg.RateLimitKey, Payments: cfg.RateLimitPayments, StreamsPerKey: cfg.MaxStreamsPerKey}, log)
	proxies, err := gate.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return fail(fmt.Errorf("--trusted-proxies: %w", err))
	}
	rest := crtxhttp.New(m, crtxhttp.Options{AdminToken: admin, Logger: log, MetricsElsewhere: cfg.MetricsAddr != "", Collectors: collectors, Gate: g, Proxies: proxies})
	pages, err := web.New(m, web.Options{AdminToken: admin, CheckAdminToken: rest.CheckAdminToken, ListingNonce: rest.ListingNonce, OpenAPI: crtxhttp.OpenAPI(), Logger: log})
	if err != nil {
		return fail(err)
	}
	for _, rt := range pages.Routes() {
		rest.Mount(rt.Method, rt.Path, rt.Handle)
	}
	rest.NotFoundPage(pages.NotFound)
	rest.Protocol("/mcp", mcp.New(m, mcp.Options{Gate: g, Logger: log}))
	rest.Protocol("/mcp/x402", mcp.NewX402(m, mcp.Options{Gate: g, Logger: log}))
	agents := a2a.New(m, a2a.Options{Gate: g, Logger: log})
	rest.Protocol("/a2a/", agents)
	rest.Protocol("GET /.well-known/jwks.json", agents)
	models := openai.New(m, openai.Options{Gate: g, Logger: log})
	for _, route := range openai.Routes() {
		rest.Protocol(route, models)
	}
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fail(fmt.Errorf("--metrics-addr: %w", err))
		}
	}
	// Joined last, once nothing is left to fail: a replica that never
	// serves leaves no settings recorded, no heartbeat and no chain bound
	// behind.
	bind := func(tx crtx.Tx) error {
		_, err := bindChains(ctx, tx, m.Config().Chains, true)
		return err
	}
	if err := m.Join(ctx, joining, alone, rotations, bind); err != nil {
		if mln != nil {
			mln.Close()
		}
		return fail(err)
	}
	srv := &http.Server{
		Handler:           rest,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &Daemon{Market: m, Store: store, URL: strings.TrimRight(cfg.PublicURL, "/"), cancel: cancel, done: make(chan error, 1),
		admin: admin, adminFile: cfg.AdminTokenFile}
	var jobs sync.WaitGroup
	jobs.Go(func() { m.Ledger.RunSealer(ctx, cfg.BlockInterval) })
	jobs.Go(func() { m.Ledger.RunRollup(ctx, cfg.RollupInterval) })
	jobs.Go(func() { m.RunHeartbeat(ctx) })
	jobs.Go(func() { m.RunNotifications(ctx, nil) })
	if alone {
		// This process holds the folder's lock: whatever is in flight was
		// left by one that died, and runs again now.
		m.TakeOverAll(ctx)
	}
	jobs.Go(func() { m.RunWorker(ctx, cfg.RecoveryInterval) })
	jobs.Go(func() { m.Connectors.RunWebhooks(ctx, cfg.RecoveryInterval, api.WebhookBody(m.Links())) })
	jobs.Go(func() { m.Connectors.RunPushes(ctx, cfg.RecoveryInterval, a2a.PushBody(m)) })
	jobs.Go(func() { m.Listings.RunReleases(ctx, cfg.ReleaseInterval) })
	if len(m.Config().Chains) > 0 {
		jobs.Go(func() { m.Funds.RunDeposits(ctx) })
		jobs.Go(func() { m.Funds.RunWithdrawals(ctx) })
		jobs.Go(func() { m.Ledger.RunAnchors(ctx) })
		jobs.Go(func() { m.Ledger.RunReserveCheck(ctx) })
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if cfg.PprofAddr != "" {
		pm := http.NewServeMux()
		pm.HandleFunc("/debug/pprof/", pprof.Index)
		pm.HandleFunc("/debug/pprof/profile", pprof.Profile)
		pm.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		pm.HandleFunc("/debug/pprof/trace", pprof.Trace)
		psrv := &http.Server{Addr: cfg.PprofAddr, Handler: pm, ReadHeaderTimeout: 10 * time.Second}
		go psrv.ListenAndServe()
		go func() { <-ctx.Done(); psrv.Close() }()
	}
	if mln != nil {
		mm := http.NewServeMux()
		mm.Handle("GET /metrics", rest.Metrics())
		msrv := &http.Server{Handler: mm, ReadHeaderTimeout: 10 * time.Second}
		go msrv.Serve(mln)
		go func() { <-ctx.Done(); msrv.Close() }()
		d.MetricsURL = "http://" + mln.Addr().String() + "/metrics"
	}
	log.Info("crtxd serving", "addr", ln.Addr().String(), "public_url", d.URL, "admin_api", token != "")
	go func() {
		var err error
		select {
		case <-ctx.Done():
		case err = <-serveErr:
		}
		// Stop accepting, let in-flight requests finish up to the timeout,
		// then stop the background jobs and close the store.
		sctx, scancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
		scancel()
		cancel()
		jobs.Wait()
		lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
		lerr := m.Leave(lctx)
		lcancel()
		if lerr != nil {
			log.Warn("leaving the replicas", "err", lerr)
		}
		m.Stop()
		if cerr := store.Close(); err == nil {
			err = cerr
		}
		unlock()
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		log.Info("crtxd stopped")
		d.done <- err
	}()
	return d, nil
}

// Wait blocks until the daemon has stopped and returns why.
func (d *Daemon) Wait() error {
	err := <-d.done
	d.done <- err
	return err
}

// Close stops the daemon gracefully and waits for it.
func (d *Daemon) Close() error {
	d.cancel()
	return d.Wait()
}
