package market

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Config holds what the marketplace core needs to know; cmd/crtxd fills it
// from flags and CRTX_* variables.
type Config struct {
	// PublicURL is the absolute base of every URL field, without a trailing
	// slash. Offline operator commands, which serve no one, leave it empty:
	// URL fields are then paths, and no sign-in message can match.
	PublicURL string
	// FeeBps is the platform's share of each execution, in basis points.
	FeeBps int
	// AirdropMax is the most one devnet airdrop gives.
	AirdropMax crtx.USDC
	// AirdropsPerHour is how many airdrops one wallet gets in a rolling hour.
	AirdropsPerHour int
	// CollateralTiers price listings' collateral; nil means DefaultCollateralTiers.
	CollateralTiers []crtx.CollateralTier
	// Caller reaches creators' services.
	Caller crtx.Caller
	// MaxDispatches bounds the dispatches in flight in this process. Each
	// environment is guaranteed a quarter of them, and one creator or one
	// wallet holds at most MaxDispatchShare of them in an environment
	// (slots). An asynchronous execution waits, pending and cancellable,
	// for a slot free to it; a synchronous one finding none is refused
	// (unavailable) before any money moves. 0 means 10,000: each call in
	// flight costs memory (docs/performance.md) and two open files.
	MaxDispatches int
	// MaxDispatchShare is the fraction of MaxDispatches one creator, or one
	// wallet, may hold in one environment (at least one slot); 0 means 0.25.
	MaxDispatchShare float64
	// MaxInFlightPerKey and MaxInFlightPerWallet bound the executions one
	// API key, and one wallet in one environment, may have pending or
	// running at once, asynchronous ones included, until each ends; the
	// store counts them as it opens one (Opening), so the limits hold
	// across replicas. 0 is no limit.
	MaxInFlightPerKey, MaxInFlightPerWallet int
	// WebhookRetryBase is the first wait before a failed webhook is sent
	// again; each failure doubles it, up to an hour. 0 means 1 s.
	WebhookRetryBase time.Duration
	// Lease is how long a process owns an execution's dispatch without
	// renewing it; after that, any process may take it over. 0 means 15 s.
	Lease time.Duration
	// Heartbeat is how often a replica says it is alive (RunHeartbeat); one
	// silent for three takes over its executions. 0 means 1 s.
	Heartbeat time.Duration
	// StreamRecheck is how often a stream following an execution reads it
	// without having been told of a change: the most a change announced
	// by another replica, and lost on the way, can be late. 0 means 5 s.
	StreamRecheck time.Duration
	// Chains are the Solana clusters of the environments that have one:
	// their money enters by deposits paid on the chain and leaves by
	// withdrawals the treasury signs, and their blocks are anchored there.
	// An environment without one keeps its money on the ledger alone.
	Chains map[crtx.Environment]crtx.Chain
	// ChainBound are the environments whose money has been held on a chain,
	// configured in this process or not: no money enters or leaves them by
	// hand (crtxd ledger deposit, the admin API, the airdrop).
	ChainBound map[crtx.Environment]bool
	// OperatorDepositCommand is the command the operator runs, where this
	// marketplace runs, to credit amount to wallet in env by hand: what a
	// shortfall in an environment without a chain tells to run. It names
	// the operator's paths, so only a developer's own marketplace (crtxd
	// dev) sets it; nil names the admin API alone.
	OperatorDepositCommand func(env crtx.Environment, wallet string, amount crtx.USDC) string
	// SettleAfter is the longest synchronous x402 call settled after its
	// result; a longer one is settled before its dispatch. 0 means
	// DefaultSettleAfter.
	SettleAfter time.Duration
	// Faucet, when set, gives a wallet test USDC (and SOL for its fees) on
	// devnet's chain: a local network crtx runs (crtxd dev --local-chain),
	// where the airdrop pays on the chain instead of on the ledger.
	Faucet func(ctx context.Context, wallet string, amount crtx.USDC) (crtx.Faucet, error)
	// AnchorInterval is how often the newest sealed block of each
	// environment with a chain is anchored; 0 means a minute.
	AnchorInterval time.Duration
	// ChainPoll is how often deposits are looked for and withdrawals
	// followed on the chain; 0 means a second.
	ChainPoll time.Duration
	// Authority signs ledger blocks; Signer signs requests to creators.
	Authority ed25519.PrivateKey
	Signer    ed25519.PrivateKey
	// NextSigner, during a rotation, is the public key that will sign
	// requests after the switch, published beside Signer's; PreviousSigner,
	// for a while after the switch, the one that signed them before, which
	// replicas not switched yet still sign with.
	NextSigner, PreviousSigner ed25519.PublicKey
	// Schemes are the ways of paying for a call: the ledger's (required)
	// and those paid per call with x402 (package payment).
	Schemes []payment.New
	// Now is the clock; tests inject their own.
	Now    func() time.Time
	Logger *slog.Logger
}

// core is what the services share: the store, the configuration and clock,
// and the process's caches, slots and leases.
type core struct {
	store   crtx.Store
	cfg     Config
	domain  string
	replica string // Replica

	// bg is the context of background dispatches; stop ends it.
	bg     context.Context
	stop   context.CancelFunc
	jobs   sync.WaitGroup
	slots  *slots // dispatch slots
	leases leases // the executions this process runs or holds in line

	schemas    *ttlCache[*jsonschema.Schema]            // compiled input schemas
	pages      *ttlCache[crtx.AgentPage]                // catalog pages, for a second
	totals     *ttlCache[int]                           // catalog counts by filter, for a few seconds
	tags       *ttlCache[map[string]int]                // listed agents by tag, as totals
	runs       *ttlCache[[]crtx.DayRuns]                // agents' runs per day, for a minute
	examples   *ttlCache[*Example]                      // agents' examples, for a minute
	figures    *ttlCache[map[string]crtx.AgentListItem] // catalog cards' other figures, as totals
	keys       *ttlCache[crtx.APIKey]                   // API keys by hash, for keyCacheTTL
	clientDocs *ttlCache[crtx.OAuthClient]              // OAuth clients' metadata documents, by URL
	signals    *signals
	agentCache *ttlCache[crtx.Agent] // agents by id for the checks before an execution, for a second
	hooks      *destinations         // webhook destinations' pace
	beats      *beats                // the other replicas' heartbeats, as seen here
	tally      *tally                // executions ended and dispatch times, for metrics
	watches    *watches              // the executions streams follow here
	surplus    surpluses             // the last reserve check's
	streamed   *pieces               // the pieces of the streamed results of the calls run here
	schemes    schemes               // the ways of paying
	paying     payment.Figures       // what they count for /metrics
	// nudge wakes the withdrawal worker when a withdrawal is requested.
	nudge chan struct{}
	// signing is held while a withdrawal picks a nonce account, signs on
	// it and stores the bytes, so the process's own withdrawals never pick
	// one account at once (another replica's may: the store refuses one).
	signing sync.Mutex
	// outbox holds the ids of executions whose change the other replicas
	// are yet to hear of (RunNotifications); nil on a store of one process.
	outbox chan string
	// market is the whole, for a service that asks another.
	market *Market
}

// Defaults is the one place the service's defaults are written: New gives
// them to zero fields (but FeeBps, where 0 is a free marketplace, and the
// in-flight limits, where 0 is none), and crtxd's flags start from them.
func Defaults() Config {
	return Config{FeeBps: 100, AirdropMax: 1000 * crtx.MicroPerUSDC, AirdropsPerHour: 5, CollateralTiers: crtx.DefaultCollateralTiers,
		MaxDispatches: 10_000, MaxDispatchShare: 0.25, MaxInFlightPerKey: 256, MaxInFlightPerWallet: 512,
		AnchorInterval: time.Minute, ChainPoll: time.Second,
		WebhookRetryBase: time.Second, Lease: 15 * time.Second, Heartbeat: time.Second, StreamRecheck: 5 * time.Second}
}

// New returns a Market over store. Zero config fields take their defaults.
func New(store crtx.Store, cfg Config) (*Market, error) {
	def := Defaults()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.AirdropMax = cmp.Or(cfg.AirdropMax, def.AirdropMax)
	cfg.AirdropsPerHour = cmp.Or(cfg.AirdropsPerHour, def.AirdropsPerHour)
	cfg.Lease = cmp.Or(cfg.Lease, def.Lease)
	cfg.AnchorInterval = cmp.Or(cfg.AnchorInterval, def.AnchorInterval)
	cfg.ChainPoll = cmp.Or(cfg.ChainPoll, def.ChainPoll)
	cfg.Heartbeat = cmp.Or(cfg.Heartbeat, def.Heartbeat)
	cfg.WebhookRetryBase = cmp.Or(cfg.WebhookRetryBase, def.WebhookRetryBase)
	cfg.MaxDispatches = cmp.Or(cfg.MaxDispatches, def.MaxDispatches)
	cfg.StreamRecheck = cmp.Or(cfg.StreamRecheck, def.StreamRecheck)
	cfg.MaxDispatchShare = cmp.Or(cfg.MaxDispatchShare, def.MaxDispatchShare)
	if cfg.CollateralTiers == nil {
		cfg.CollateralTiers = def.CollateralTiers
	}
	if cfg.MaxDispatchShare < 0 || cfg.MaxDispatchShare > 1 {
		return nil, fmt.Errorf("crtx: dispatch share %v is outside 0–1", cfg.MaxDispatchShare)
	}
	if cfg.FeeBps < 0 || cfg.FeeBps > 10000 {
		return nil, fmt.Errorf("crtx: platform fee %d bps is outside 0–10000", cfg.FeeBps)
	}
	if len(cfg.Authority) != ed25519.PrivateKeySize || len(cfg.Signer) != ed25519.PrivateKeySize {
		return nil, errors.New("crtx: the ledger authority and marketplace signing keys are required")
	}
	var domain string
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("crtx: public URL %q must be an absolute http(s) URL", cfg.PublicURL)
		}
		domain = u.Host
	}
	bg, stop := context.WithCancel(context.Background())
	var outbox chan string
	if _, ok := store.(crtx.Notifier); ok {
		outbox = make(chan string, outboxSize)
	}
	c := &core{surplus: surpluses{by: map[crtx.Environment]crtx.USDC{}}, nudge: make(chan struct{}, 1), outbox: outbox, watches: &watches{by: map[string]*watch{}}, store: store, cfg: cfg, domain: domain, replica: crtx.NewUUID(), tally: &tally{}, bg: bg, stop: stop, slots: newSlots(cfg.MaxDispatches, cfg.MaxDispatchShare),
		schemas: newTTLCache[*jsonschema.Schema](0, 4096), pages: newTTLCache[crtx.AgentPage](time.Second, 4096),
		totals: newTTLCache[int](totalTTL, 4096), tags: newTTLCache[map[string]int](totalTTL, 1),
		runs: newTTLCache[[]crtx.DayRuns](time.Minute, 4096), examples: newTTLCache[*Example](time.Minute, 4096),
		figures: newTTLCache[map[string]crtx.AgentListItem](totalTTL, 1024), keys: newTTLCache[crtx.APIKey](keyCacheTTL, 4096),
		clientDocs: newTTLCache[crtx.OAuthClient](clientDocTTL, 1024),
		signals:    &signals{by: map[string]func(string){}}, streamed: &pieces{by: map[string]*pieceLog{}},
		agentCache: newTTLCache[crtx.Agent](time.Second, 4096), hooks: &destinations{hosts: map[string]destination{}}, beats: &beats{}}
	m := &Market{core: c, Catalog: &Catalog{c}, Executions: &Executions{c}, Funds: &Funds{c}, Listings: &Listings{c},
		Disputes: &Disputes{c}, Accounts: &Accounts{c}, Connectors: &Connectors{c}, Ledger: &Ledger{c}, X402: &X402{c}}
	c.market = m
	var err error
	if c.schemes, err = newSchemes(schemeHost{c}, cfg.Schemes); err != nil {
		stop()
		return nil, err
	}
	return m, nil
}

// Config returns the market's configuration.
func (m *Market) Config() Config { return m.cfg }

// Ping checks that the store answers.
func (m *Market) Ping(ctx context.Context) error { return m.store.Ping(ctx) }

// Now is the market's clock.
func (m *Market) Now() time.Time { return m.cfg.Now() }

// now is the clock at the precision the store keeps (microseconds, UTC), so a
// time hashed before a write is the time read back after it.
func (m *core) now() time.Time { return m.cfg.Now().UTC().Truncate(time.Microsecond) }

// AuthorityPublicKey is the key that signs ledger blocks.
func (m *Market) AuthorityPublicKey() ed25519.PublicKey {
	return m.cfg.Authority.Public().(ed25519.PublicKey)
}

// SigningPublicKey is the key that signs requests to creators, published at
// /.well-known/crtx.json.
func (m *Market) SigningPublicKey() ed25519.PublicKey {
	return m.cfg.Signer.Public().(ed25519.PublicKey)
}

// Links are where the marketplace's views point: its public URL and its
// chains' explorers.
func (m *core) Links() crtx.Links {
	return crtx.Links{PublicURL: m.cfg.PublicURL, Chains: m.cfg.Chains}
}

// missing answers a lookup that found nothing with the API's error of that
// code and message; any other error passes through.
func missing(err error, code, format string, args ...any) error {
	if errors.Is(err, crtx.ErrNotFound) {
		return crtx.Errorf(code, format, args...)
	}
	return err
}

// internal wraps an unexpected failure with what was being done; the edge
// logs it and answers 500 internal_error.
func internal(what string, err error) error {
	if err == nil {
		return nil
	}
	var e *crtx.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, crtx.ErrBusy) {
		// Nothing was written: the transaction was rolled back each time.
		return &crtx.Error{Code: crtx.CodeUnavailable, RetryAfter: 1,
			Message: "the marketplace is too busy to take this request now and changed nothing; retry in a second (with the same Idempotency-Key, the retry is safe)"}
	}
	return fmt.Errorf("%s: %w", what, err)
}
