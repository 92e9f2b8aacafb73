package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/surfnet"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
)

// localChain is the Solana network crtxd dev --local-chain runs for devnet:
// Surfnet, a process of its own that stops with crtxd, and a mint standing
// for USDC on it.
type localChain struct {
	net  *surfnet.Net
	mint string
	auth ed25519.PrivateKey // the mint's authority
}

// demoChainUSDC and demoChainSOL are what the demo wallet holds on a new
// local chain: test USDC to pay in, and SOL for the fees of its transfers.
const (
	demoChainUSDC = 100 * crtx.MicroPerUSDC
	demoChainSOL  = 1_000_000_000
)

// startLocalChain starts a local Solana network with slots of slot, a mint
// and a funded treasury on it, and gives devnet that chain in cfg, whose
// store it marks to start empty: the network keeps nothing from one run to
// the next, so neither does the ledger. The daemon empties only a store
// made so that never ran otherwise (daemon.ErrNotFresh).
func startLocalChain(ctx context.Context, cfg *daemon.Config, slot time.Duration, log io.Writer) (*localChain, error) {
	switch {
	case cfg.DB != "":
		return nil, errors.New("--local-chain keeps its ledger in the data folder's SQLite store, which starts afresh with each new chain: drop --db")
	case cfg.SolanaRPCDevnet != "" || cfg.TreasuryKeypair != "":
		return nil, errors.New("--local-chain gives devnet a chain and a treasury of its own: drop --solana-rpc-devnet and --treasury-keypair")
	case slot < time.Millisecond:
		return nil, errors.New("--local-chain-slot must be at least 1ms")
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, err
	}
	modules, err := surfnet.Package(ctx, log)
	if err != nil {
		return nil, err
	}
	net, err := surfnet.Start(ctx, modules, slot, log)
	if err != nil {
		return nil, err
	}
	// Set-up transfers wait for one confirmation, not finality: a slot
	// each, not some thirty.
	net.Await = rpc.ConfirmationStatusConfirmed
	lc, err := setUpLocalChain(ctx, cfg, net)
	if err != nil {
		net.Stop()
		return nil, err
	}
	// Its slots are known: calls settled after their result stay within a
	// blockhash's life from the first call, before the market has measured
	// any block.
	if b := market.BlockhashBound(slot); cfg.X402SettleAfter == 0 || cfg.X402SettleAfter > b {
		cfg.X402SettleAfter = b
	}
	return lc, nil
}

func setUpLocalChain(ctx context.Context, cfg *daemon.Config, net *surfnet.Net) (*localChain, error) {
	treasuryFile := filepath.Join(cfg.Data, "treasury.json")
	treasury, err := keyfile.LoadOrCreate(treasuryFile)
	if err != nil {
		return nil, fmt.Errorf("the local chain's treasury key: %w", err)
	}
	auth, err := keyfile.LoadOrCreate(filepath.Join(cfg.Data, "mint-authority.json"))
	if err != nil {
		return nil, fmt.Errorf("the local chain's mint authority key: %w", err)
	}
	// The treasury pays the fees of withdrawals, anchors and x402
	// settlements, and the rent of its nonce accounts.
	for _, w := range []struct {
		key      ed25519.PrivateKey
		lamports uint64
	}{{treasury, 100_000_000_000}, {auth, 10_000_000_000}} {
		if err := net.Airdrop(ctx, crtx.Address(w.key.Public().(ed25519.PublicKey)), w.lamports); err != nil {
			return nil, fmt.Errorf("funding the local chain's treasury and mint authority: %w", err)
		}
	}
	// The network stands in for Solana devnet: its test USDC lives at
	// devnet USDC's address and x402 names it by devnet's id, which x402's
	// clients know, so that they pay on it unmodified, given its RPC URL.
	// Explorers, anchors and reserves still name it by its genesis hash.
	mint := daemon.USDCDevnet
	if err := net.SetMint(ctx, mint, auth); err != nil {
		return nil, fmt.Errorf("the local chain's test USDC mint: %w", err)
	}
	cfg.SolanaRPCDevnet, cfg.USDCMintDevnet, cfg.TreasuryKeypair, cfg.FreshStore = net.RPC, mint, treasuryFile, true
	cfg.DevnetNetwork = daemon.NetworkDevnet
	lc := &localChain{net: net, mint: mint, auth: auth}
	cfg.Faucet = lc.faucet
	return lc, nil
}

// faucetSOL is the SOL a faucet gives with its USDC when the wallet holds
// less: enough for its transactions' fees and a token account's rent.
const faucetSOL = 100_000_000

// faucet gives wallet amount of test USDC in its token account, made if
// missing, and SOL for its fees if it holds less than faucetSOL: the
// airdrop of a marketplace on the local chain.
func (lc *localChain) faucet(ctx context.Context, wallet string, amount crtx.USDC) (crtx.Faucet, error) {
	f := crtx.Faucet{}
	held, err := lc.net.Balance(ctx, wallet)
	if err != nil {
		return f, err
	}
	if held < faucetSOL {
		if err := lc.net.Airdrop(ctx, wallet, faucetSOL); err != nil {
			return f, err
		}
		f.Lamports = faucetSOL
	}
	if f.Signature, err = lc.net.MintTo(ctx, lc.mint, lc.auth, wallet, amount); err != nil {
		return f, err
	}
	account, _, err := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(wallet), solana.MustPublicKeyFromBase58(lc.mint))
	f.TokenAccount = account.String()
	return f, err
}

// fund gives wallet SOL and test USDC on the chain.
func (lc *localChain) fund(ctx context.Context, wallet string) error {
	if err := lc.net.Airdrop(ctx, wallet, demoChainSOL); err != nil {
		return err
	}
	_, err := lc.net.MintTo(ctx, lc.mint, lc.auth, wallet, demoChainUSDC)
	return err
}
