package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/keyfile"
)

// The official USDC mints: the defaults of --usdc-mint-mainnet and
// --usdc-mint-devnet.
const (
	USDCMainnet = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	USDCDevnet  = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
)

// NetworkDevnet is Solana devnet's CAIP-2 id, as x402 names it.
const NetworkDevnet = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"

// chainMeta names the store's record that an environment's money is bound
// to a chain: once one has run there, money never again enters it by hand,
// even from an offline command started without the chain's flags.
func chainMeta(env crtx.Environment) string { return "chain_mint_" + string(env) }

// ErrMixedMoney is returned for a chain given to an environment whose
// ledger holds money that entered without one.
var ErrMixedMoney = errors.New("ledger money without a chain")

// rpcOf returns the configured RPC and mint of env.
func (c Config) rpcOf(env crtx.Environment) (rpc, mint string) {
	if env == crtx.Mainnet {
		return c.SolanaRPCMainnet, c.USDCMintMainnet
	}
	return c.SolanaRPCDevnet, c.USDCMintDevnet
}

// openChains returns the chain of each environment with an RPC configured;
// it reaches none of them.
func openChains(cfg Config) (map[crtx.Environment]crtx.Chain, error) {
	chains := map[crtx.Environment]crtx.Chain{}
	if cfg.SolanaRPCMainnet == "" && cfg.SolanaRPCDevnet == "" {
		return chains, nil
	}
	treasury, err := keyfile.Load(cfg.TreasuryKeypair)
	if err != nil {
		return nil, fmt.Errorf("--treasury-keypair: %w", err)
	}
	for _, env := range crtx.Environments {
		rpc, mint := cfg.rpcOf(env)
		if rpc == "" {
			continue
		}
		network := ""
		if env == crtx.Devnet {
			network = cfg.DevnetNetwork
		}
		c, err := chain.New(chain.Config{RPC: rpc, Mint: mint, Treasury: treasury, NonceAccounts: cfg.NonceAccounts, Network: network})
		if err != nil {
			return nil, fmt.Errorf("--solana-rpc-%s: %w", env, err)
		}
		chains[env] = c
	}
	return chains, nil
}

// bindChains returns, as tx holds them, the environments bound to a chain,
// configured here or not, refusing a mint other than the one recorded;
// with record, it also records, for each environment with a chain, the
// mint its money is held in. An environment whose ledger already holds
// money that entered without a chain (airdrops, operator deposits) is
// never bound to one: its treasury never received that money, so the
// reserves would read short forever. Only a replica that joins records
// (Start, in market.Join's transaction): one refused, or one that never
// serves, binds no environment to its chain.
func bindChains(ctx context.Context, tx crtx.Tx, chains map[crtx.Environment]crtx.Chain, record bool) (map[crtx.Environment]bool, error) {
	bound := map[crtx.Environment]bool{}
	for _, env := range crtx.Environments {
		have, err := tx.System.Meta(ctx, chainMeta(env))
		if err != nil && !errors.Is(err, crtx.ErrNotFound) {
			return nil, err
		}
		c := chains[env]
		switch {
		case c == nil:
		case have == "":
			issued, err := tx.Ledger.Account(ctx, env, crtx.AccountAddress(crtx.AccountIssuance, crtx.IssuanceID))
			if err != nil && !errors.Is(err, crtx.ErrNotFound) {
				return nil, err
			}
			if err == nil && issued.Balance != 0 {
				return nil, fmt.Errorf("%w: --solana-rpc-%s: this store's %s ledger holds %s USDC that entered without a chain (airdrops, operator deposits), which the treasury never received; "+
					"a chain cannot take that money over: give the chain a store of its own (a new --data folder, or another --db), or run %s without a chain as before",
					ErrMixedMoney, env, env, -issued.Balance, env)
			}
			if record {
				if err := tx.System.SetMeta(ctx, chainMeta(env), c.Mint()); err != nil {
					return nil, err
				}
			}
		case have != c.Mint():
			return nil, fmt.Errorf("--usdc-mint-%s %s: the %s ledger holds money in mint %s", env, c.Mint(), env, have)
		}
		bound[env] = have != "" || c != nil
	}
	return bound, nil
}

// ensureTreasuries creates each chain's treasury token account and nonce
// accounts if missing.
func ensureTreasuries(ctx context.Context, chains map[crtx.Environment]crtx.Chain) error {
	for env, c := range chains {
		ec, ok := c.(*chain.Client)
		if !ok {
			continue
		}
		if err := ec.EnsureTokenAccount(ctx); err != nil {
			return fmt.Errorf("the %s treasury's token account: %w", env, err)
		}
		if err := ec.EnsureNonceAccounts(ctx); err != nil {
			return fmt.Errorf("the %s treasury's nonce accounts: %w", env, err)
		}
	}
	return nil
}
