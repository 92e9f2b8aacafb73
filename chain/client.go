// Package chain is the marketplace's Solana cluster: crtx.Chain over
// JSON-RPC, with github.com/gagliardetto/solana-go building and signing the
// transactions. Deposits arrive as Solana Pay transfer requests and are
// found by their reference, withdrawals are SPL TransferChecked the treasury
// signs, and anchors are SPL Memos. Nothing here trusts the commitment
// parameter of a request: whether a transaction is finalized is read from
// its signature's status, as some RPC servers ignore the parameter.
package chain

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	bin "github.com/gagliardetto/binary"
	"github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/crtx-market/crtx"
)

// Decimals is USDC's: an amount in crtx.USDC is the mint's base units.
const Decimals = 6

// Config is one environment's cluster.
type Config struct {
	// RPC is the cluster's JSON-RPC URL.
	RPC string
	// Mint is the USDC mint's address.
	Mint string
	// Treasury is the key of the wallet that receives deposits, pays
	// withdrawals and pays every transaction's fee.
	Treasury ed25519.PrivateKey
	// Cluster names the cluster for explorer links; empty, it is guessed
	// from RPC.
	Cluster string
	// Network, when set, is the CAIP-2 id x402 names the cluster by in
	// place of its own: a local network that stands in for a public one
	// (crtxd dev --local-chain's devnet names itself devnet, whose id and
	// USDC x402's clients know). Its name for explorers and anchors stays
	// what its genesis hash says.
	Network string
	// NonceAccounts is how many durable nonce accounts the treasury signs
	// withdrawals on, so how many may be in flight at once; zero means
	// DefaultNonceAccounts.
	NonceAccounts int
}

// Client is a crtx.Chain over one cluster's JSON-RPC.
type Client struct {
	rpc     *rpc.Client
	url     string
	cluster string
	// guessed is set while the cluster's name is only guessed from the
	// RPC URL, until identify reads it from the cluster.
	guessed      bool
	mint         solana.PublicKey
	treasury     solana.PrivateKey
	tokenAccount solana.PublicKey
	nonces       []solana.PublicKey
	calls        *calls
	// seen holds the transactions read, so that one named by several
	// references, or read again, is fetched once.
	seen *seen
	// pageSize is how many signatures one getSignaturesForAddress call
	// asks for; tests lower it to make every read span pages.
	pageSize int
	// poll is how often a wait reads a signature's status.
	poll time.Duration
	// genesis is the cluster's genesis hash, once read (Network).
	genesis atomic.Pointer[string]
	// network is Config.Network.
	network string
	// clock measures the cluster's block time (BlockTime).
	clock blockClock
}

var _ crtx.Chain = (*Client)(nil)

// New checks cfg without reaching the cluster, so that a marketplace whose
// chain is down still starts and says so (EnsureTokenAccount, /readyz).
// Until EnsureTokenAccount reads it, the cluster's name is guessed from
// the RPC URL's host.
func New(cfg Config) (*Client, error) {
	if cfg.RPC == "" {
		return nil, fmt.Errorf("%w: no RPC URL", ErrConfig)
	}
	mint, err := solana.PublicKeyFromBase58(cfg.Mint)
	if err != nil {
		return nil, fmt.Errorf("%w: mint %q: %w", ErrConfig, cfg.Mint, err)
	}
	if len(cfg.Treasury) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: the treasury key is not an Ed25519 private key", ErrConfig)
	}
	treasury := solana.PrivateKey(cfg.Treasury)
	account, _, err := solana.FindAssociatedTokenAddress(treasury.PublicKey(), mint)
	if err != nil {
		return nil, fmt.Errorf("%w: the treasury's token account: %w", ErrConfig, err)
	}
	if cfg.NonceAccounts == 0 {
		cfg.NonceAccounts = DefaultNonceAccounts
	}
	if cfg.NonceAccounts < 1 || cfg.NonceAccounts > 256 {
		return nil, fmt.Errorf("%w: %d nonce accounts: between 1 and 256", ErrConfig, cfg.NonceAccounts)
	}
	nonces, err := nonceAccounts(treasury.PublicKey(), cfg.NonceAccounts)
	if err != nil {
		return nil, err
	}
	counted := newCalls()
	c := &Client{
		nonces:       nonces,
		calls:        counted,
		seen:         newSeen(seenSize),
		rpc:          rpc.NewWithCustomRPCClient(jsonrpc.NewClientWithOpts(cfg.RPC, &jsonrpc.RPCClientOpts{HTTPClient: counted.client()})),
		url:          cfg.RPC,
		network:      cfg.Network,
		cluster:      cfg.Cluster,
		mint:         mint,
		treasury:     treasury,
		tokenAccount: account,
		pageSize:     1000,
		poll:         500 * time.Millisecond,
	}
	if c.cluster == "" {
		c.cluster, c.guessed = guessCluster(cfg.RPC), true
	}
	return c, nil
}

// checkMint refuses an address that is not an SPL Token mint of USDC's
// decimals.
func checkMint(ctx context.Context, cl *rpc.Client, mint solana.PublicKey) error {
	info, err := cl.GetAccountInfoWithOpts(ctx, mint, &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
	if isNotFound(err) {
		return fmt.Errorf("%w: the mint %s does not exist", ErrConfig, mint)
	}
	if err != nil {
		return fmt.Errorf("reading the mint %s: %w", mint, err)
	}
	if info.Value.Owner != solana.TokenProgramID {
		return fmt.Errorf("%w: %s is not an SPL Token mint", ErrConfig, mint)
	}
	var m token.Mint
	if err := m.UnmarshalWithDecoder(bin.NewBinDecoder(info.Value.Data.GetBinary())); err != nil || !m.IsInitialized {
		return fmt.Errorf("%w: %s is not an SPL Token mint", ErrConfig, mint)
	}
	if m.Decimals != Decimals {
		return fmt.Errorf("%w: the mint %s has %d decimals, not USDC's %d", ErrConfig, mint, m.Decimals, Decimals)
	}
	return nil
}

// genesis maps the genesis hash of each public cluster to its name: what
// a cluster is, whatever the host of its RPC provider is called.
var genesis = map[string]string{
	"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d": "mainnet-beta",
	"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG": "devnet",
	"4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY": "testnet",
}

// identify names the cluster by its genesis hash, unless the
// configuration named it: wallets are asked to send on it, and explorer
// links point to it. Any other cluster (a local validator) is "custom".
// It runs once, at start, before anything reads the name.
func (c *Client) identify(ctx context.Context) error {
	if !c.guessed {
		return nil
	}
	h, err := c.rpc.GetGenesisHash(ctx)
	if err != nil {
		return fmt.Errorf("reading the cluster's genesis hash: %w", err)
	}
	g := h.String()
	c.genesis.Store(&g)
	c.cluster, c.guessed = genesis[g], false
	if c.cluster == "" {
		c.cluster = "custom"
	}
	return nil
}

// guessCluster names the public cluster an RPC URL's host names, as
// providers put it there (api.devnet.solana.com, mainnet.helius-rpc.com).
func guessCluster(rpcURL string) string {
	u, err := url.Parse(rpcURL)
	if err != nil {
		return "custom"
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case strings.Contains(host, "mainnet"):
		return "mainnet-beta"
	case strings.Contains(host, "devnet"):
		return "devnet"
	case strings.Contains(host, "testnet"):
		return "testnet"
	}
	return "custom"
}

// Cluster names the cluster for explorer links.
func (c *Client) Cluster() string { return c.cluster }

// RPC is the JSON-RPC URL the client was configured with.
func (c *Client) RPC() string { return c.url }

// Treasury is the treasury wallet's address.
func (c *Client) Treasury() string { return c.treasury.PublicKey().String() }

// TokenAccount is the treasury's USDC associated token account.
func (c *Client) TokenAccount() string { return c.tokenAccount.String() }

// Mint is the USDC mint's address.
func (c *Client) Mint() string { return c.mint.String() }

// TokenAccountOf derives wallet's USDC associated token account.
func (c *Client) TokenAccountOf(wallet string) (string, error) {
	w, err := solana.PublicKeyFromBase58(wallet)
	if err != nil {
		return "", fmt.Errorf("%w: wallet %q: %w", ErrAddress, wallet, err)
	}
	a, _, err := solana.FindAssociatedTokenAddress(w, c.mint)
	if err != nil {
		return "", fmt.Errorf("%w: wallet %q: %w", ErrAddress, wallet, err)
	}
	return a.String(), nil
}

// HasTokenAccount reports whether wallet's USDC token account exists.
func (c *Client) HasTokenAccount(ctx context.Context, wallet string) (bool, error) {
	a, err := c.TokenAccountOf(wallet)
	if err != nil {
		return false, err
	}
	_, err = c.rpc.GetAccountInfoWithOpts(ctx, solana.MustPublicKeyFromBase58(a), &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// EnsureTokenAccount creates the treasury's token account if it is
// missing, the treasury paying, and waits until it is finalized: deposits
// cannot arrive before it exists.
//
// It first checks that the mint is an SPL Token mint of USDC's decimals:
// amounts are read and written in its base units, so another mint's
// decimals would misprice every transfer.
func (c *Client) EnsureTokenAccount(ctx context.Context) error {
	if err := c.identify(ctx); err != nil {
		return err
	}
	if err := checkMint(ctx, c.rpc, c.mint); err != nil {
		return err
	}
	info, err := c.rpc.GetAccountInfoWithOpts(ctx, c.tokenAccount, &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
	if err == nil {
		if info.Value.Owner != solana.TokenProgramID {
			return fmt.Errorf("%w: the treasury's token account %s is not owned by the token program", ErrConfig, c.tokenAccount)
		}
		return nil
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the treasury's token account: %w", err)
	}
	payer := c.treasury.PublicKey()
	create := ata.NewCreateIdempotentInstruction(payer, payer, c.mint).Build()
	if _, _, err := c.submit(ctx, []solana.Instruction{create}, c.treasury); err != nil {
		return fmt.Errorf("creating the treasury's token account: %w", err)
	}
	return nil
}
