package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/store/postgres"
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
	// TrustedProxies are the load balancers' CIDRs, comma-separated, whose
	// X-Forwarded-For, Forwarded and X-Request-Id are believed.
	TrustedProxies string
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
