package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/dispatch"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/shell"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/sqlite"
)

// Keys are the two keys crtxd keeps in --data, and during a rotation of
// the marketplace key the next one.
type Keys struct {
	Authority ed25519.PrivateKey // signs ledger blocks
	Signer    ed25519.PrivateKey // signs requests to creators
	Next      ed25519.PrivateKey // will sign them after the switch; nil but during a rotation
	Previous  ed25519.PrivateKey // signed them before the switch; nil but for an hour after it
}

// publicOf is k's public half, nil for no key.
func publicOf(k ed25519.PrivateKey) ed25519.PublicKey {
	if k == nil {
		return nil
	}
	return k.Public().(ed25519.PublicKey)
}

// The key files in --data.
const (
	authorityFile   = "authority.json"
	marketplaceFile = "marketplace.json"
	nextFile        = "marketplace.next.json"
	previousFile    = "marketplace.previous.json"
)

// LoadKeys reads the keys in dir, creating them when create is set and
// they do not exist yet.
func LoadKeys(dir string, create bool) (Keys, error) {
	load := keyfile.Load
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return Keys{}, err
		}
		load = keyfile.LoadOrCreate
	}
	var k Keys
	var err error
	if k.Authority, err = load(filepath.Join(dir, authorityFile)); err != nil {
		return k, fmt.Errorf("ledger authority key: %w", err)
	}
	if k.Signer, err = load(filepath.Join(dir, marketplaceFile)); err != nil {
		return k, fmt.Errorf("marketplace signing key: %w", err)
	}
	if k.Next, err = rotating(dir, nextFile, k.Signer); err != nil {
		return k, fmt.Errorf("next marketplace signing key: %w", err)
	}
	if k.Previous, err = rotating(dir, previousFile, k.Signer); err != nil {
		return k, fmt.Errorf("previous marketplace signing key: %w", err)
	}
	return k, nil
}

// rotating reads the key of a rotation in file, nil when there is none or
// it is the marketplace's own (a file left behind by the switch).
func rotating(dir, file string, signer ed25519.PrivateKey) (ed25519.PrivateKey, error) {
	k, err := keyfile.Load(filepath.Join(dir, file))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && k.Equal(signer)) {
		return nil, nil
	}
	return k, err
}

// InitNextKey writes the key that will sign requests after a rotation of
// the marketplace key into dir, beside the marketplace's: never replacing
// one, and only for a folder that holds a marketplace key.
func InitNextKey(dir string) (ed25519.PublicKey, error) {
	if _, err := keyfile.Load(filepath.Join(dir, marketplaceFile)); err != nil {
		return nil, fmt.Errorf("the marketplace key to rotate: %w", err)
	}
	path := filepath.Join(dir, nextFile)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (a rotation is under way: switch to it; or abandon it by removing the file from every replica and starting them again, all stopped first)", ErrKeysExist, path)
	}
	k, err := keyfile.LoadOrCreate(path)
	if err != nil {
		return nil, err
	}
	return k.Public().(ed25519.PublicKey), nil
}

// ErrKeysExist is returned by InitKeys for a folder that holds a key.
var ErrKeysExist = errors.New("the folder holds a marketplace's key already")

// InitKeys writes a new marketplace's two keys into dir, creating it: the
// step of its own before a first start that may not write (a read-only
// --data). It never replaces a key: a folder holding either is refused.
func InitKeys(dir string) (Keys, error) {
	for _, f := range []string{authorityFile, marketplaceFile} {
		if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, fs.ErrNotExist) {
			return Keys{}, fmt.Errorf("%w: %s (a key is never replaced: a new marketplace takes a folder of its own)", ErrKeysExist, filepath.Join(dir, f))
		}
	}
	return LoadKeys(dir, true)
}

// CheckExisting refuses a --data folder that holds no marketplace: the
// SQLite database (when --db is empty) and the two keys. The offline
// commands call it first, so that a forgotten or mistyped --data is an
// error, not a new, empty marketplace that verifies.
func CheckExisting(ctx context.Context, cfg Config) error {
	files := []string{authorityFile, marketplaceFile}
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

// openKeys loads the keys in --data, creating them for a store that has
// none recorded yet: a new marketplace's first start. A store that has
// one is a marketplace already, whose keys a replica must be given, never
// made anew. It refuses an authority key other than the one that signed
// the store's blocks, since every later block would fail verification.
func openKeys(ctx context.Context, cfg Config, store crtx.Store) (Keys, error) {
	have, err := crtx.Read(ctx, store, func(tx crtx.Tx) (string, error) { return tx.System.Meta(ctx, authorityMeta) })
	if err != nil && !errors.Is(err, crtx.ErrNotFound) {
		return Keys{}, err
	}
	keys, err := LoadKeys(cfg.Data, have == "")
	// Which file failed, and whether it is there, tells reading it (files
	// made for another user) from making it (a read-only first start).
	var statErr error = fs.ErrNotExist
	if path := (*fs.PathError)(nil); errors.As(err, &path) {
		_, statErr = os.Lstat(path.Path)
	}
	switch {
	case have != "" && errors.Is(err, fs.ErrNotExist):
		return keys, fmt.Errorf("%w: this marketplace's keys belong in --data %s: copy %s and %s there from another replica or a backup", err, cfg.Data, authorityFile, marketplaceFile)
	case errors.Is(err, fs.ErrPermission) && statErr == nil:
		return keys, fmt.Errorf("%w: crtxd cannot read its key files: give them to the user it runs as (chown, mode 0600)", err)
	case errors.Is(err, fs.ErrPermission) && errors.Is(statErr, fs.ErrPermission):
		return keys, fmt.Errorf("%w: crtxd cannot open --data %s: give the folder to the user it runs as, or let it in", err, cfg.Data)
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return keys, fmt.Errorf("%w: a first start writes the keys into --data; where it may not, make them first with crtxd init --data %s", err, cfg.Data)
	case err != nil:
		return keys, err
	}
	pub := crtx.Address(keys.Authority.Public().(ed25519.PublicKey))
	err = store.Update(ctx, func(tx crtx.Tx) error {
		have, err := tx.System.Meta(ctx, authorityMeta)
		switch {
		case errors.Is(err, crtx.ErrNotFound):
			return tx.System.SetMeta(ctx, authorityMeta, pub)
		case err != nil:
			return err
		case have != pub:
			return fmt.Errorf("the ledger was signed by authority %s, but %s holds %s", have,
				filepath.Join(cfg.Data, authorityFile), pub)
		}
		return nil
	})
	return keys, err
}

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

// OpenMarket opens the store and keys and returns the market over them
// (openKeys). It binds no environment to its chain (bindChains): a
// replica records that as it joins (Start). cfg must be valid (Config.Validate);
// the caller closes the store after stopping the market.
func OpenMarket(ctx context.Context, cfg Config, log *slog.Logger) (*market.Market, crtx.Store, error) {
	store, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	keys, err := openKeys(ctx, cfg, store)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	chains, err := openChains(cfg)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	var bound map[crtx.Environment]bool
	err = store.View(ctx, func(tx crtx.Tx) (err error) {
		bound, err = bindChains(ctx, tx, chains, false)
		return err
	})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	caller := dispatch.New(dispatch.Options{Signer: keys.Signer, AllowPrivate: cfg.AllowPrivateEndpoints,
		LookupIP: cfg.LookupIP, Now: cfg.Now})
	m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: strings.TrimRight(cfg.PublicURL, "/"), FeeBps: cfg.PlatformFeeBps,
		AirdropsPerHour: cfg.AirdropsPerHour, Authority: keys.Authority, Signer: keys.Signer, NextSigner: publicOf(keys.Next), PreviousSigner: publicOf(keys.Previous), Caller: caller, Lease: cfg.Lease,
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
