package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/crtx-market/crtx/daemon"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// storeFlags adds the flags every command that opens the store shares,
// bound to cfg.
func storeFlags(fs *pflag.FlagSet, cfg *daemon.Config) {
	fs.StringVar(&cfg.Data, "data", cfg.Data, "directory for the SQLite file (crtx.db) and the keys")
	fs.StringVar(&cfg.DB, "db", cfg.DB, "postgres://… selects PostgreSQL; empty means SQLite in --data")
	fs.IntVar(&cfg.DBConns, "db-conns", cfg.DBConns, "PostgreSQL connections this process keeps open")
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log lines as text or json")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "least severe level logged: debug, info, warn or error")
}

// serveFlags adds the flags of crtxd serve (CONTRACT §0).
func serveFlags(fs *pflag.FlagSet, cfg *daemon.Config) {
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address to listen on, host:port")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "absolute base of every URL field (default http://<addr>)")
	fs.StringVar(&cfg.AdminTokenFile, "admin-token-file", cfg.AdminTokenFile, "file holding the admin API token, at least 32 characters (openssl rand -base64 32 makes one); the admin API is off when unset")
	fs.BoolVar(&cfg.AllowPrivateEndpoints, "allow-private-endpoints", cfg.AllowPrivateEndpoints, "let creator endpoints and webhooks resolve to loopback or private addresses")
	fs.IntVar(&cfg.PlatformFeeBps, "platform-fee-bps", cfg.PlatformFeeBps, "platform fee in basis points, 0 to 10000")
	fs.DurationVar(&cfg.BlockInterval, "block-interval", cfg.BlockInterval, "how often ledger blocks are sealed")
	fs.DurationVar(&cfg.RollupInterval, "rollup-interval", cfg.RollupInterval, "how often ended executions' credits to creators and the treasury, and agents' statistics, are posted")
	fs.IntVar(&cfg.AirdropsPerHour, "airdrops-per-hour", cfg.AirdropsPerHour, "devnet airdrops one wallet gets in a rolling hour")
	fs.DurationVar(&cfg.Lease, "lease", cfg.Lease, "how long a replica owns an execution's dispatch without renewing it")
	fs.IntVar(&cfg.MaxDispatches, "max-dispatches", cfg.MaxDispatches, "calls to creators in flight at once in this process; each costs memory (docs/performance.md) and two open files (0: 10000)")
	fs.Float64Var(&cfg.MaxDispatchShare, "max-dispatch-share", cfg.MaxDispatchShare, "share of the dispatch slots one creator, or one wallet, may hold in an environment (more than 0, at most 1)")
	fs.DurationVar(&cfg.RecoveryInterval, "recovery-interval", cfg.RecoveryInterval, "how often executions whose lease ran out are taken over")
	fs.DurationVar(&cfg.ReleaseInterval, "release-interval", cfg.ReleaseInterval, "how often delisted agents' collateral is checked for release")
	fs.StringVar(&cfg.TrustedProxies, "trusted-proxies", cfg.TrustedProxies, "comma-separated CIDRs or addresses of the load balancers whose X-Forwarded-For, Forwarded and X-Request-Id are believed; everyone else's are ignored")
	fs.Float64Var(&cfg.RateLimitIP, "rate-limit-ip", cfg.RateLimitIP, "requests a second one address may make to sign-in, airdrops, the public endpoints that read the chain, and OAuth registration, token and revocation (0: off)")
	fs.Float64Var(&cfg.RateLimitKey, "rate-limit-key", cfg.RateLimitKey, "requests a second one API key may make (0: off)")
	fs.Float64Var(&cfg.RateLimitPayments, "rate-limit-payments", cfg.RateLimitPayments, "x402 payments a second the marketplace simulates, all payers together; each payer also at --rate-limit-ip (0: off)")
	fs.DurationVar(&cfg.X402SettleAfter, "x402-settle-after", cfg.X402SettleAfter, "the longest synchronous x402 call settled after its result (a failed call then costs nothing); longer ones, and asynchronous ones, are settled first and refunded on the chain if they fail")
	fs.IntVar(&cfg.MaxInFlightPerKey, "max-inflight-per-key", cfg.MaxInFlightPerKey, "executions one API key may have pending or running at once (0: off)")
	fs.IntVar(&cfg.MaxInFlightPerWallet, "max-inflight-per-wallet", cfg.MaxInFlightPerWallet, "executions one wallet may have pending or running at once in an environment (0: off)")
	fs.IntVar(&cfg.MaxStreamsPerKey, "max-streams-per-key", cfg.MaxStreamsPerKey, "streams one API key may have open at once in this process: execution events, A2A streams, MCP tasks/result and run_agent calls waiting for their runs (0: off)")
	// MCP is stateless since protocol 2026-07-28: no sessions to cap. The
	// flags stay, doing nothing, so that a deployment that sets them starts.
	for _, name := range []string{"mcp-sessions-per-key", "mcp-sessions-per-wallet"} {
		fs.Int(name, 0, "ignored: MCP keeps no sessions")
		fs.MarkDeprecated(name, "MCP keeps no sessions any more; a waiting call takes one of --max-streams-per-key")
	}
	chainFlags(fs, cfg)
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cfg.MetricsAddr, "serve GET /metrics on this address only (a private one) instead of on --addr")
	fs.StringVar(&cfg.PprofAddr, "pprof-addr", cfg.PprofAddr, "serve net/http/pprof on this address (keep it on loopback); off when empty")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long SIGTERM waits for in-flight requests")
}

// chainFlags adds the flags of the Solana chains (docs/chain.md).
func chainFlags(fs *pflag.FlagSet, cfg *daemon.Config) {
	fs.StringVar(&cfg.SolanaRPCMainnet, "solana-rpc-mainnet", cfg.SolanaRPCMainnet, "Solana JSON-RPC URL of mainnet's chain: deposits, withdrawals and anchors in USDC (empty: mainnet's money lives on the ledger alone)")
	fs.StringVar(&cfg.SolanaRPCDevnet, "solana-rpc-devnet", cfg.SolanaRPCDevnet, "Solana JSON-RPC URL of devnet's chain (empty: no chain, and the airdrop, unless this data ran devnet on a chain before)")
	fs.StringVar(&cfg.USDCMintMainnet, "usdc-mint-mainnet", cfg.USDCMintMainnet, "the USDC mint on mainnet's chain")
	fs.StringVar(&cfg.USDCMintDevnet, "usdc-mint-devnet", cfg.USDCMintDevnet, "the USDC mint on devnet's chain")
	fs.StringVar(&cfg.TreasuryKeypair, "treasury-keypair", cfg.TreasuryKeypair, "Solana CLI key file of the treasury wallet: receives deposits, pays withdrawals and transaction fees (required with a Solana RPC)")
	fs.DurationVar(&cfg.AnchorInterval, "anchor-interval", cfg.AnchorInterval, "how often the newest ledger block is anchored on the chain, and the reserves checked")
	fs.DurationVar(&cfg.ChainPoll, "chain-poll", cfg.ChainPoll, "how often the chain is read for deposits' payments and withdrawals' progress")
	fs.IntVar(&cfg.NonceAccounts, "nonce-accounts", cfg.NonceAccounts, "how many durable nonce accounts the treasury signs withdrawals on: withdrawals in flight at once per environment")
}

// envName is the variable a flag is also read from: --addr ⇔ CRTX_ADDR.
func envName(flag string) string {
	return "CRTX_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// fromEnvironment fills every flag of fs not given on the command line
// from its CRTX_<FLAG> variable, so flags win over the environment and the
// environment over defaults. Cobra's own flags (--help, --version) are
// left alone: a stray CRTX_HELP must not turn every run into help.
func fromEnvironment(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || f.Annotations[cobra.FlagSetByCobraAnnotation] != nil {
			return
		}
		env := envName(f.Name)
		v, ok := os.LookupEnv(env)
		if !ok {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = fmt.Errorf("%s=%q: %w", env, v, serr)
			return
		}
		// Counts as given, so a required flag set in the environment
		// passes cobra's check.
		f.Changed = true
	})
	return err
}
