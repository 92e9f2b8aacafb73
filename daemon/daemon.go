// Package daemon assembles crtxd from its parts (store, keys, market, HTTP
// server, background jobs) and runs it until its context ends. cmd/crtxd and
// the end-to-end tests start the marketplace the same way, through here.
package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crtx-market/crtx/a2a"
	"github.com/crtx-market/crtx/mcp"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/dispatch"
	"github.com/crtx-market/crtx/gate"
	crtxhttp "github.com/crtx-market/crtx/http"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/shell"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/sqlite"
	"github.com/crtx-market/crtx/web"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is crtxd's configuration; cmd/crtxd fills it from flags and CRTX_*.
type Config struct {
	Addr string
	Data string
	DB   string
	// DBConns is how many PostgreSQL connections this process keeps: as
	// many as the database's cores can keep busy, not one per client.
	DBConns               int
	PublicURL             string
	AdminTokenFile        string
	AllowPrivateEndpoints bool
	PlatformFeeBps        int
	BlockInterval         time.Duration
	// RollupInterval is how often ended executions' deferred credits and
	// statistics are posted: the lag of creators' balances behind them.
	RollupInterval   time.Duration
	AirdropsPerHour  int
	ShutdownTimeout  time.Duration
	Lease            time.Duration
	MaxDispatches    int
	WebhookRetryBase time.Duration
	ReleaseInterval  time.Duration
	RecoveryInterval time.Duration
	LogFormat        string
	LogLevel         string
	// MaxDispatchShare is the share of the dispatch slots one creator or
	// wallet may hold in an environment (market.Config).
	MaxDispatchShare float64
	// Limits against abuse: per client address on sign-in and airdrops, per
	// API key, executions pending or running per key and per wallet, and
	// streams open per key.
	RateLimitIP, RateLimitKey float64
	// RateLimitPayments is how many x402 payments a second are simulated,
	// all payers together; X402SettleAfter the longest synchronous x402
	// call settled after its result (market.Config.SettleAfter).
	RateLimitPayments                       float64
	X402SettleAfter                         time.Duration
	MaxInFlightPerKey, MaxInFlightPerWallet int
	MaxStreamsPerKey                        int
	// Solana: each environment's JSON-RPC URL (empty: no chain, its money
	// on the ledger alone) and USDC mint; the treasury's key file, which
	// receives deposits, pays withdrawals and pays the fees; how often
	// blocks are anchored, and how often the chain is read for deposits
	// and withdrawals.
	SolanaRPCMainnet, SolanaRPCDevnet string
	USDCMintMainnet, USDCMintDevnet   string
	TreasuryKeypair                   string
	AnchorInterval, ChainPoll         time.Duration
	// NonceAccounts is how many durable nonce accounts the treasury signs
	// withdrawals on: how many withdrawals of an environment are in
	// flight at once.
	NonceAccounts int
	// OperatorHints makes a shortfall's message name the operator's
	// command that credits the money missing, with this machine's paths
	// (the admin token file, the data folder): for crtxd dev, whose caller
	// is its operator; a served marketplace's callers must not read them.
	OperatorHints bool

	// FreshStore empties the SQLite store of Data before it opens, once
	// this process holds the folder alone: crtxd dev --local-chain, whose
	// chain starts anew on each run, so that its ledger never records money
	// on a chain that is gone. Only a store FreshStore made, and that never
	// ran without it since, is emptied (else ErrNotFresh). Keys and the
	// admin token stay.
	FreshStore bool
	// DevnetNetwork, when set, is the x402 network id devnet's chain is
	// named by instead of its own (chain.Config.Network): crtxd dev
	// --local-chain's network stands in for Solana devnet.
	DevnetNetwork string
	// Faucet gives a wallet test USDC and SOL on devnet's chain, when that
	// chain is a local network crtx runs (market.Config.Faucet).
	Faucet func(ctx context.Context, wallet string, amount crtx.USDC) (crtx.Faucet, error)

	// PprofAddr, when set, serves net/http/pprof there (keep it on loopback).
	PprofAddr string
	// MetricsAddr, when set, serves GET /metrics there instead of on Addr.
	MetricsAddr string

	// LookupIP replaces the resolver of creator endpoints (tests).
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)

	// Now and Logger are for tests; nil means the real clock and a logger
	// built from LogFormat and LogLevel on LogOutput (stderr when nil).
	Now       func() time.Time
	Logger    *slog.Logger
	LogOutput io.Writer
}

// Defaults returns the configuration of CONTRACT §0: the service's own
// defaults (market.Defaults) and those of the process around it.
func Defaults() Config {
	md := market.Defaults()
	return Config{Addr: "127.0.0.1:8080", Data: "./crtx-data", DBConns: postgres.DefaultConns, PlatformFeeBps: md.FeeBps,
		BlockInterval: 2 * time.Second, RollupInterval: 200 * time.Millisecond, AirdropsPerHour: md.AirdropsPerHour,
		ShutdownTimeout: 30 * time.Second, Lease: md.Lease, MaxDispatches: md.MaxDispatches, WebhookRetryBase: md.WebhookRetryBase,
		MaxDispatchShare: md.MaxDispatchShare, MaxInFlightPerKey: md.MaxInFlightPerKey, MaxInFlightPerWallet: md.MaxInFlightPerWallet,
		RecoveryInterval: time.Second, ReleaseInterval: time.Minute, RateLimitIP: 10, RateLimitPayments: 20, MaxStreamsPerKey: 64,
		X402SettleAfter: market.DefaultSettleAfter,
		USDCMintMainnet: USDCMainnet, USDCMintDevnet: USDCDevnet, AnchorInterval: md.AnchorInterval, ChainPoll: md.ChainPoll,
		NonceAccounts: chain.DefaultNonceAccounts, LogFormat: "text", LogLevel: "info"}
}

// Validate checks the configuration once, before anything is opened, and
// names the flag at fault.
func (c Config) Validate() error {
	if _, err := c.logger(); err != nil {
		return err
	}
	switch {
	case isPostgres(c.DB) && c.DBConns < 1:
		return errors.New("--db-conns must be at least 1")
	case !isPostgres(c.DB) && c.DB != "":
		return fmt.Errorf("--db %q: use a postgres:// DSN, or leave it empty for SQLite in --data", c.DB)
	case c.PlatformFeeBps < 0 || c.PlatformFeeBps > 10000:
		return fmt.Errorf("--platform-fee-bps %d is outside 0–10000", c.PlatformFeeBps)
	case c.BlockInterval <= 0 || c.RollupInterval <= 0:
		return errors.New("--block-interval and --rollup-interval must be more than zero")
	case c.RecoveryInterval <= 0 || c.ReleaseInterval <= 0:
		return errors.New("--recovery-interval and --release-interval must be more than zero")
	case c.MaxDispatches < 0 || c.Lease < 0:
		return errors.New("--max-dispatches and --lease must not be negative")
	case c.MaxDispatchShare <= 0 || c.MaxDispatchShare > 1:
		return fmt.Errorf("--max-dispatch-share %v must be more than 0 and at most 1", c.MaxDispatchShare)
	case c.MaxInFlightPerKey < 0 || c.MaxInFlightPerWallet < 0:
		return errors.New("--max-inflight-per-key and --max-inflight-per-wallet must not be negative")
	case (c.SolanaRPCMainnet != "" || c.SolanaRPCDevnet != "") && c.TreasuryKeypair == "":
		return errors.New("--treasury-keypair is required with a Solana RPC: the key file (solana-keygen new -o treasury.json) of the wallet that holds the deposits and pays withdrawals and fees")
	case c.AnchorInterval <= 0 || c.ChainPoll <= 0:
		return errors.New("--anchor-interval and --chain-poll must be more than zero")
	case c.NonceAccounts < 1 || c.NonceAccounts > 256:
		return fmt.Errorf("--nonce-accounts %d must be between 1 and 256", c.NonceAccounts)
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("--public-url %q must be an absolute http(s) URL", c.PublicURL)
		}
	}
	return nil
}

// Logger builds the logger the configuration asks for.
func (c Config) logger() (*slog.Logger, error) {
	if c.Logger != nil {
		return c.Logger, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", c.LogLevel, err)
	}
	out := c.LogOutput
	if out == nil {
		out = os.Stderr
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.LogFormat {
	case "json":
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(out, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", c.LogFormat)
}

// Keys are the two keys crtxd keeps in --data.
type Keys struct {
	Authority ed25519.PrivateKey // signs ledger blocks
	Signer    ed25519.PrivateKey // signs requests to creators
}

// LoadKeys reads the keys in dir, creating them on first start.
func LoadKeys(dir string) (Keys, error) {
	var k Keys
	var err error
	if k.Authority, err = keyfile.LoadOrCreate(filepath.Join(dir, "authority.json")); err != nil {
		return k, fmt.Errorf("ledger authority key: %w", err)
	}
	if k.Signer, err = keyfile.LoadOrCreate(filepath.Join(dir, "marketplace.json")); err != nil {
		return k, fmt.Errorf("marketplace signing key: %w", err)
	}
	return k, nil
}

// CheckExisting refuses a --data folder that holds no marketplace: the
// SQLite database (when --db is empty) and the two keys. The offline
// commands call it first, so that a forgotten or mistyped --data is an
// error, not a new, empty marketplace that verifies.
func CheckExisting(ctx context.Context, cfg Config) error {
	files := []string{"authority.json", "marketplace.json"}
	if !isPostgres(cfg.DB) {
		files = append(files, "crtx.db")
	} else if ok, err := postgres.Migrated(ctx, cfg.DB); err != nil || !ok {
		if err == nil {
			err = errors.New("give the database, and search_path, crtxd serve uses")
		}
		return fmt.Errorf("--db holds no marketplace: %w", err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(cfg.Data, f)); err != nil {
			return fmt.Errorf("--data %s holds no marketplace (no %s): give the folder crtxd serve uses", cfg.Data, f)
		}
	}
	return nil
}

// operatorDeposit is the command that credits a wallet by hand where this
// marketplace runs: the admin API with its token file when it serves one
// (crtxd dev always does); else crtxd ledger deposit on its store, which
// on SQLite runs only once crtxd has stopped, as it holds the folder.
func operatorDeposit(cfg Config) func(env crtx.Environment, wallet string, amount crtx.USDC) string {
	if !cfg.OperatorHints {
		return nil
	}
	if cfg.AdminTokenFile != "" && cfg.PublicURL != "" {
		token, _ := filepath.Abs(cfg.AdminTokenFile)
		return func(env crtx.Environment, wallet string, amount crtx.USDC) string {
			return fmt.Sprintf(`curl -s -X POST %s -H "Authorization: Bearer $(cat %s)" -H 'Content-Type: application/json' -d '{"environment": "%s", "wallet": "%s", "amount_usdc": %s}'`,
				shell.Quote(strings.TrimRight(cfg.PublicURL, "/")+"/v1/admin/deposits"), shell.Quote(token), env, wallet, amount)
		}
	}
	store, when := `--db "$CRTX_DB"`, ""
	if !isPostgres(cfg.DB) {
		data, _ := filepath.Abs(cfg.Data)
		store, when = "--data "+shell.Quote(data), " (once crtxd has stopped: it holds the folder)"
	}
	return func(env crtx.Environment, wallet string, amount crtx.USDC) string {
		return fmt.Sprintf("crtxd ledger deposit %s --environment %s --wallet %s --amount %s%s", store, env, wallet, amount, when)
	}
}

// freshMeta marks a store made by FreshStore that has run only so since:
// the one kind FreshStore empties again.
const freshMeta = "fresh_store"

// ErrNotFresh is returned for FreshStore on a store that it did not make,
// or that has run without it since: its money is kept, never emptied.
var ErrNotFresh = errors.New("the data folder holds a store that was not made fresh for this use")

// emptyStore removes the SQLite store's files from the data folder, if it
// is one FreshStore made and only ever ran so; this process holds the
// folder alone, so no other reads the files.
func emptyStore(ctx context.Context, cfg Config, alone bool) error {
	if isPostgres(cfg.DB) {
		return errors.New("a fresh store is the data folder's SQLite one, not --db's PostgreSQL")
	}
	if !alone {
		return errors.New("a fresh store needs this process to hold the data folder alone, which this system cannot lock")
	}
	path := filepath.Join(cfg.Data, "crtx.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	v, err := crtx.Read(ctx, crtx.Store(s), func(tx crtx.Tx) (string, error) { return tx.Meta(ctx, freshMeta) })
	s.Close()
	if err != nil && !errors.Is(err, crtx.ErrNotFound) {
		return err
	}
	if v != "true" {
		return fmt.Errorf("%w: --data %s", ErrNotFresh, cfg.Data)
	}
	for _, f := range []string{"crtx.db", "crtx.db-wal", "crtx.db-shm"} {
		if err := os.Remove(filepath.Join(cfg.Data, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// markFresh records whether the store runs as FreshStore made it: a store
// that runs once without it keeps its money from then on.
func markFresh(ctx context.Context, store crtx.Store, fresh bool) error {
	return store.Update(ctx, func(tx crtx.Tx) error {
		v, err := tx.Meta(ctx, freshMeta)
		if err != nil && !errors.Is(err, crtx.ErrNotFound) {
			return err
		}
		switch {
		case fresh:
			return tx.SetMeta(ctx, freshMeta, "true")
		case v == "true":
			return tx.SetMeta(ctx, freshMeta, "false")
		}
		return nil
	})
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// OpenStore opens the store a valid configuration (Config.Validate) names:
// PostgreSQL for a postgres:// DSN, else SQLite in --data.
func OpenStore(ctx context.Context, cfg Config) (crtx.Store, error) {
	if isPostgres(cfg.DB) {
		db, err := postgres.Open(ctx, cfg.DB, "")
		if err != nil {
			return nil, err
		}
		db.SetConns(cfg.DBConns)
		return db, nil
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, filepath.Join(cfg.Data, "crtx.db"))
}

const authorityMeta = "ledger_authority_public_key"

// OpenExisting opens the marketplace in cfg's --data (and --db) for an
// offline operator command: it must exist already, and it serves no one, so
// it has no public URL. Close the store when done.
func OpenExisting(ctx context.Context, cfg Config) (*market.Market, crtx.Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if err := CheckExisting(ctx, cfg); err != nil {
		return nil, nil, err
	}
	cfg.PublicURL = ""
	return OpenMarket(ctx, cfg, nil)
}

// OpenMarket opens the store and keys and returns the market over them. It
// refuses to start with an authority key other than the one that signed the
// store's blocks, since every later block would fail verification. cfg must
// be valid (Config.Validate); the caller closes the store after stopping the
// market.
func OpenMarket(ctx context.Context, cfg Config, log *slog.Logger) (*market.Market, crtx.Store, error) {
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, nil, err
	}
	keys, err := LoadKeys(cfg.Data)
	if err != nil {
		return nil, nil, err
	}
	store, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	pub := crtx.Address(keys.Authority.Public().(ed25519.PublicKey))
	err = store.Update(ctx, func(tx crtx.Tx) error {
		have, err := tx.Meta(ctx, authorityMeta)
		switch {
		case errors.Is(err, crtx.ErrNotFound):
			return tx.SetMeta(ctx, authorityMeta, pub)
		case err != nil:
			return err
		case have != pub:
			return fmt.Errorf("the ledger was signed by authority %s, but %s holds %s", have,
				filepath.Join(cfg.Data, "authority.json"), pub)
		}
		return nil
	})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	chains, err := openChains(cfg)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	bound, err := bindChains(ctx, store, chains)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	caller := dispatch.New(dispatch.Options{Signer: keys.Signer, AllowPrivate: cfg.AllowPrivateEndpoints,
		LookupIP: cfg.LookupIP, Now: cfg.Now})
	m, err := market.New(store, market.Config{PublicURL: strings.TrimRight(cfg.PublicURL, "/"), FeeBps: cfg.PlatformFeeBps,
		AirdropsPerHour: cfg.AirdropsPerHour, Authority: keys.Authority, Signer: keys.Signer, Caller: caller, Lease: cfg.Lease,
		MaxDispatches: cfg.MaxDispatches, MaxDispatchShare: cfg.MaxDispatchShare, WebhookRetryBase: cfg.WebhookRetryBase,
		MaxInFlightPerKey: cfg.MaxInFlightPerKey, MaxInFlightPerWallet: cfg.MaxInFlightPerWallet, Now: cfg.Now, Logger: log,
		Chains: chains, ChainBound: bound, AnchorInterval: cfg.AnchorInterval, ChainPoll: cfg.ChainPoll, SettleAfter: cfg.X402SettleAfter,
		OperatorDepositCommand: operatorDeposit(cfg), Faucet: cfg.Faucet})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return m, store, nil
}

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
		b, err := os.ReadFile(cfg.AdminTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--admin-token-file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); len(token) < crtxhttp.MinAdminToken {
			return nil, fmt.Errorf("--admin-token-file: the token has %d characters and must have at least %d, so that it cannot be guessed; make one with: openssl rand -base64 32 > %s",
				len(token), crtxhttp.MinAdminToken, cfg.AdminTokenFile)
		}
	}
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
	api := crtxhttp.New(m, crtxhttp.Options{AdminToken: token, Logger: log, MetricsElsewhere: cfg.MetricsAddr != "", Collectors: collectors, Gate: g})
	pages, err := web.New(m, web.Options{AdminToken: token, CheckAdminToken: api.CheckAdminToken, ListingNonce: api.ListingNonce, OpenAPI: crtxhttp.OpenAPI(), Logger: log})
	if err != nil {
		return fail(err)
	}
	for _, rt := range pages.Routes() {
		api.Mount(rt.Method, rt.Path, rt.Handle)
	}
	api.NotFoundPage(pages.NotFound)
	api.Protocol("/mcp", mcp.New(m, mcp.Options{Gate: g, Logger: log}))
	api.Protocol("/mcp/x402", mcp.NewX402(m, mcp.Options{Gate: g, Logger: log}))
	agents := a2a.New(m, a2a.Options{Gate: g, Logger: log})
	api.Protocol("/a2a/", agents)
	api.Protocol("GET /.well-known/jwks.json", agents)
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fail(fmt.Errorf("--metrics-addr: %w", err))
		}
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &Daemon{Market: m, Store: store, URL: strings.TrimRight(cfg.PublicURL, "/"), cancel: cancel, done: make(chan error, 1)}
	var jobs sync.WaitGroup
	jobs.Go(func() { m.RunSealer(ctx, cfg.BlockInterval) })
	jobs.Go(func() { m.RunRollup(ctx, cfg.RollupInterval) })
	jobs.Go(func() { m.RunHeartbeat(ctx) })
	jobs.Go(func() { m.RunNotifications(ctx, nil) })
	if alone {
		// This process holds the folder's lock: whatever is in flight was
		// left by one that died, and runs again now.
		m.TakeOverAll(ctx)
	}
	jobs.Go(func() { m.RunWorker(ctx, cfg.RecoveryInterval) })
	jobs.Go(func() { m.RunWebhooks(ctx, cfg.RecoveryInterval) })
	jobs.Go(func() { m.RunPushes(ctx, cfg.RecoveryInterval, a2a.PushBody(m)) })
	jobs.Go(func() { m.RunReleases(ctx, cfg.ReleaseInterval) })
	if len(m.Config().Chains) > 0 {
		jobs.Go(func() { m.RunDeposits(ctx) })
		jobs.Go(func() { m.RunWithdrawals(ctx) })
		jobs.Go(func() { m.RunAnchors(ctx) })
		jobs.Go(func() { m.RunReserveCheck(ctx) })
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
		mm.Handle("GET /metrics", api.Metrics())
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
