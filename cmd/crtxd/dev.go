package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/examples/agents"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/shell"
	"github.com/spf13/cobra"
)

type example struct {
	name, title, tagline, description string
	tags                              []string
	price                             crtx.USDC
	fn                                creator.Func
	in, out                           string
}

var examples = []example{
	{"textstats", "Text statistics", "Counts words, sentences and frequent words of a text.",
		"Send any text as the task. Answers JSON: words, sentences, lines, characters, reading time and the most frequent words (parameter top, default 5).",
		[]string{"writing", "data"}, 10_000, agents.TextStats, agents.TextStatsInput, agents.TextStatsOutput},
	{"jsoncsv", "JSON/CSV converter", "Converts a JSON array of objects to CSV and back.",
		"Send the data as the task and {\"direction\": \"json_to_csv\"} or {\"direction\": \"csv_to_json\"} as parameters; optional delimiter.",
		[]string{"data"}, 20_000, agents.JSONCSV, agents.JSONCSVInput, agents.JSONCSVOutput},
}

// demoMainnet is what crtxd dev tops the demo wallet's mainnet balance up
// to on each start: the collateral of one listing priced up to 0.10 USDC
// a call (the sample examples/textstats/listing.json), so the creator
// quick start lists an agent with no deposit of its own.
func demoMainnet() crtx.USDC { return crtx.DefaultCollateralTiers[0].Collateral }

// demoDevnet is what it tops the demo wallet's devnet balance up to, for
// calls.
const demoDevnet = 100 * crtx.MicroPerUSDC

func devCommand() *cobra.Command {
	cfg := daemon.Defaults()
	cfg.Data = "./crtx-dev"
	cfg.AllowPrivateEndpoints = true
	cfg.OperatorHints = true // its caller is its operator
	cfg.BlockInterval = time.Second
	cfg.LogLevel = "warn"
	// One developer's sandbox: a thousand calls in flight is plenty, and
	// fits the open-file limit of any machine, so it starts without
	// serve's warning about it.
	cfg.MaxDispatches = 1000
	var local bool
	var slot time.Duration
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the marketplace for development, with example agents and a funded wallet",
		Long: `Run a marketplace for development: a data folder of its own (--data, ./crtx-dev), private
endpoints allowed, the example agents running and listed, and a demo wallet with an API key. On
each start the demo wallet is topped up to 100 USDC on devnet, for calls, and to 10 USDC on
mainnet, the collateral of one listing; an environment on a Solana chain (--solana-rpc-devnet,
docs/chain.md) gets no top-up, its money enters by deposits paid on the chain. It prints how to
call an agent and how to list one.
A second run reuses the folder. It takes the flags of crtxd serve, with other defaults.

--local-chain runs a local Solana network for devnet (Surfnet, on Node.js), with a test USDC
mint and the demo wallet funded on it, and prints a crtx deposit --pay line; the network stops
with crtxd, and each run starts a new chain and an empty ledger in its own folder (docs/chain.md).`,
		Example: `  crtxd dev
  crtxd dev --addr 127.0.0.1:9090 --data /tmp/crtx-dev
  crtxd dev --local-chain --data ./crtx-dev-local`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.LogOutput = cmd.ErrOrStderr()
			var lc *localChain
			if local {
				var err error
				if lc, err = startLocalChain(cmd.Context(), &cfg, slot, cmd.ErrOrStderr()); err != nil {
					return err
				}
				defer lc.net.Stop()
			}
			return dev(cmd.Context(), cfg, lc, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&local, "local-chain", false, "run a local Solana network (Surfnet, on Node.js) for devnet, with a test USDC mint and the demo wallet funded on it; it stops with crtxd, and the ledger starts afresh with it on each run")
	cmd.Flags().DurationVar(&slot, "local-chain-slot", 100*time.Millisecond, "slot time of --local-chain's network: a payment is confirmed about a slot after it is sent, final some 32 slots later, and a blockhash lives 150 slots")
	storeFlags(cmd.Flags(), &cfg)
	serveFlags(cmd.Flags(), &cfg)
	return cmd
}

// dev runs a marketplace for development: a data folder of its own, the
// example agents running and listed, a funded demo wallet and its API
// key, and how to call it. A second run reuses the folder.
func dev(ctx context.Context, cfg daemon.Config, lc *localChain, stdout io.Writer) error {
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return err
	}
	if cfg.AdminTokenFile == "" {
		cfg.AdminTokenFile = filepath.Join(cfg.Data, "admin-token")
		if err := writeOnce(cfg.AdminTokenFile, crtx.RandomBase62(40)+"\n"); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, err := daemon.Start(ctx, cfg)
	if errors.Is(err, daemon.ErrNotFresh) {
		return fmt.Errorf("%w: it holds a marketplace that did not run on --local-chain, or ran without it since, whose money would mix with the new chain's; give --local-chain a folder of its own, e.g. --data ./crtx-dev-local", err)
	}
	if err != nil {
		return err
	}
	var running sync.WaitGroup
	setup, err := devSetup(ctx, d, cfg.Data, &running)
	if err != nil {
		cancel()
		d.Wait()
		running.Wait()
		return err
	}
	if lc != nil {
		// A new chain: the demo wallet's USDC and SOL are on it, to pay in.
		if err := lc.fund(ctx, setup.wallet); err != nil {
			cancel()
			d.Wait()
			running.Wait()
			return fmt.Errorf("funding the demo wallet on the local chain: %w", err)
		}
	}
	first := setup.agents[0]
	keypair := filepath.Join(cfg.Data, "demo-wallet.json")
	fmt.Fprintf(stdout, `crtx marketplace (development) at %[1]s
  docs:         %[1]s/docs
  data:         %[2]s (admin token in %[3]s)
  demo wallet:  %[4]s, %[5]s (keypair %[6]s)
  API key:      %[7]s
`, d.URL, cfg.Data, cfg.AdminTokenFile, setup.wallet, demoFunds(setup), keypair, setup.key)
	for _, env := range crtx.Environments {
		if c := d.Market.Chain(env); c != nil && lc != nil && env == crtx.Devnet {
			fmt.Fprintf(stdout, "  %-13s settles on a local Solana network at %s standing in for Solana devnet (it stops with crtxd; the ledger starts afresh with it on each run), treasury %s, test USDC mint %s (devnet USDC's address): crtx airdrop gives any wallet test USDC and SOL on it, which enter the ledger by a deposit paid on the chain\n",
				env+":", c.RPC(), c.Treasury(), lc.mint)
		} else if c != nil {
			fmt.Fprintf(stdout, "  %-13s settles on the Solana chain at %s, treasury %s: no airdrop, USDC enters by a deposit paid on the chain\n",
				env+":", c.RPC(), c.Treasury())
		} else if setup.chained[env] {
			fmt.Fprintf(stdout, "  %-13s ran on a Solana chain before: no airdrop, USDC enters only by a deposit, with --solana-rpc-%s again\n",
				env+":", env)
		}
	}
	for _, a := range setup.agents {
		fmt.Fprintf(stdout, "  agent:        %s  %s (%s USDC a call)\n", a.id, a.title, a.price)
	}
	task := "The quick brown fox jumps over the lazy dog. It barked."
	if c := d.Market.Chain(crtx.Devnet); c != nil && lc != nil {
		fmt.Fprintf(stdout, `
The demo wallet holds %[4]s test USDC and %[5]d SOL on the local chain. Pay 10 USDC in (credited once final, a few seconds):
  CRTX_URL=%[1]s CRTX_KEYPAIR=%[2]s go run ./cmd/crtx deposit 10 --environment devnet --pay --rpc %[3]s
Or pay for one call with x402, with no account (a call that fails costs nothing):
  CRTX_URL=%[1]s CRTX_KEYPAIR=%[2]s go run ./cmd/crtx run --x402 --rpc %[3]s %[6]s 'The quick brown fox.'
Any other wallet gets test USDC and SOL on the local chain from the faucet, then pays the same way, or with x402's own clients given the RPC URL (each agent's page shows how):
  CRTX_URL=%[1]s CRTX_KEYPAIR=payer.json go run ./cmd/crtx wallet new
  CRTX_URL=%[1]s CRTX_KEYPAIR=payer.json go run ./cmd/crtx airdrop 5
`, d.URL, shell.Quote(keypair), c.RPC(), crtx.USDC(demoChainUSDC), demoChainSOL/1_000_000_000, first.id)
	} else if c != nil {
		// Calls are paid from devnet, and on a chain nothing tops the demo
		// wallet up: paying some in comes first.
		fmt.Fprintf(stdout, `
Fund the demo wallet on devnet's chain first (its USDC token account must hold the amount, its SOL the fee):
  CRTX_URL=%s CRTX_KEYPAIR=%s go run ./cmd/crtx deposit 10 --environment devnet --pay --rpc %s
`, d.URL, shell.Quote(keypair), c.RPC())
	}
	again, try := "a second run reuses "+cfg.Data, "Try:"
	if lc != nil {
		again = "a second run starts a new chain, and a new ledger with it, in " + cfg.Data + " (its keys stay)"
		try = "Try, once the deposit above is credited (the API key pays from it):"
	}
	fmt.Fprintf(stdout, `
%[8]s
  curl -s -X POST %[1]s/v1/agents/%[2]s/execute -H 'Authorization: Bearer %[3]s' -H 'Content-Type: application/json' -d '{"task": "%[4]s"}'
  CRTX_URL=%[1]s CRTX_API_KEY=%[3]s go run ./cmd/crtx run %[2]s '%[4]s'

List an agent of your own (README.md, "Creators"), as the demo wallet:
  export CRTX_URL=%[1]s CRTX_KEYPAIR=%[6]s
  crtx creator keygen --out agent-key.json

Ctrl-C stops it; %[7]s.
`, d.URL, first.id, setup.key, task, cfg.Data, shell.Quote(keypair), again, try)
	err = d.Wait()
	cancel()
	running.Wait()
	return err
}

type devAgent struct {
	id, title string
	price     crtx.USDC
}

type devState struct {
	wallet, key     string
	devnet, mainnet crtx.USDC // the demo wallet's available balances
	// chained are the environments whose money enters only from a chain,
	// configured now or in an earlier run: the demo wallet is not topped
	// up there.
	chained map[crtx.Environment]bool
	agents  []devAgent
}

func writeOnce(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sign signs p's listing statement, with a new listing nonce and the
// marketplace it names, and for a change the listing's key transaction it
// replaces, with the creator's wallet and the agent's key.
func sign(ctx context.Context, m *market.Market, wallet, agent ed25519.PrivateKey, p *crtx.ListingParams, agentID string) error {
	creator := crtx.Address(wallet.Public().(ed25519.PublicKey))
	n, err := m.Listings.ListingNonce(ctx, creator)
	if err != nil {
		return err
	}
	p.ListingNonce, p.Marketplace = &n.Nonce, &n.Marketplace
	if agentID != "" {
		a, err := m.Listings.CreatorAgent(ctx, creator, agentID)
		if err != nil {
			return err
		}
		p.Replaces = &a.Agent.KeyTx
	}
	if err := client.SignListing(wallet, p, agentID); err != nil {
		return err
	}
	return client.SignListingKey(agent, creator, p, agentID)
}

func devSetup(ctx context.Context, d *daemon.Daemon, data string, running *sync.WaitGroup) (devState, error) {
	m := d.Market
	var st devState
	// The example agents, each with its own signing key in the folder.
	urls := map[string]string{}
	keys := map[string]string{}
	privs := map[string]ed25519.PrivateKey{}
	for _, ex := range examples {
		key, err := keyfile.LoadOrCreate(filepath.Join(data, "agent-"+ex.name+".json"))
		if err != nil {
			return st, err
		}
		privs[ex.name] = key
		ready := make(chan struct{})
		errc := make(chan error, 1)
		running.Add(1)
		go func() {
			defer running.Done()
			errc <- agents.Run(ctx, "127.0.0.1:0", key, d.URL, nil, ex.fn, func(url, pub string) {
				urls[ex.name], keys[ex.name] = url, pub
				close(ready)
			})
		}()
		select {
		case <-ready:
		case err := <-errc:
			return st, fmt.Errorf("example agent %s: %w", ex.name, err)
		}
	}
	// Their creator, with mainnet funds for the collateral.
	ckey, err := keyfile.LoadOrCreate(filepath.Join(data, "creator.json"))
	if err != nil {
		return st, err
	}
	cwallet := crtx.Address(ckey.Public().(ed25519.PublicKey))
	if _, _, err := topUp(ctx, m, crtx.Mainnet, cwallet, 1000*crtx.MicroPerUSDC); err != nil {
		return st, err
	}
	m.Listings.SetDisplayName(ctx, cwallet, "crtx examples")
	listed, err := m.Listings.CreatorAgents(ctx, cwallet, crtx.Mainnet)
	if err != nil {
		return st, err
	}
	for _, ex := range examples {
		var id string
		for _, it := range listed {
			if a := it.Agent; a.Name == ex.title && a.Status != crtx.AgentDelisted {
				id = a.ID
			}
		}
		url, pub := urls[ex.name], keys[ex.name]
		if id == "" {
			str := func(s string) *string { return &s }
			raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
			tags, price := ex.tags, ex.price
			p := crtx.ListingParams{Name: str(ex.title), Tagline: str(ex.tagline),
				Description: str(ex.description), Tags: &tags, InputSchema: raw(ex.in), OutputSchema: raw(ex.out),
				PricingModel: str("pay_per_use"), Price: &price, EndpointURL: &url, SigningPublicKey: &pub}
			// The creator's wallet authorises the agent's key and the key
			// proves it is the creator's, as any listing does
			// (docs/creators.md).
			if err := sign(ctx, m, ckey, privs[ex.name], &p, ""); err != nil {
				return st, fmt.Errorf("list %s: %w", ex.name, err)
			}
			a, err := m.Listings.CreateListing(ctx, cwallet, p)
			if err != nil {
				return st, fmt.Errorf("list %s: %w", ex.name, err)
			}
			id = a.Agent.ID
		} else {
			// The agent's key file may have been replaced since: the
			// change is signed, and the signature ignored if it is not.
			p := crtx.ListingParams{EndpointURL: &url, SigningPublicKey: &pub, Status: ptr(crtx.AgentActive)}
			if err := sign(ctx, m, ckey, privs[ex.name], &p, id); err != nil {
				return st, fmt.Errorf("update %s: %w", ex.name, err)
			}
			if _, err := m.Listings.UpdateListing(ctx, cwallet, id, p); err != nil {
				return st, fmt.Errorf("update %s: %w", ex.name, err)
			}
		}
		st.agents = append(st.agents, devAgent{id, ex.title, ex.price})
	}
	// The demo wallet, funded on devnet for calls and on mainnet for a
	// listing's collateral, and its API key, kept in the folder.
	wkey, err := keyfile.LoadOrCreate(filepath.Join(data, "demo-wallet.json"))
	if err != nil {
		return st, err
	}
	st.wallet = crtx.Address(wkey.Public().(ed25519.PublicKey))
	st.chained = map[crtx.Environment]bool{}
	if st.devnet, st.chained[crtx.Devnet], err = topUp(ctx, m, crtx.Devnet, st.wallet, demoDevnet); err != nil {
		return st, err
	}
	if st.mainnet, st.chained[crtx.Mainnet], err = topUp(ctx, m, crtx.Mainnet, st.wallet, demoMainnet()); err != nil {
		return st, err
	}
	keyPath := filepath.Join(data, "demo-api-key")
	if raw, err := os.ReadFile(keyPath); err == nil {
		st.key = strings.TrimSpace(string(raw))
		if _, err := m.Accounts.Authenticate(ctx, st.key); err != nil {
			st.key = ""
			os.Remove(keyPath)
		}
	}
	if st.key == "" {
		_, secret, err := m.Accounts.CreateKey(ctx, st.wallet, "crtxd dev", crtx.Devnet, nil)
		if err != nil {
			return st, err
		}
		st.key = secret
		if err := writeOnce(keyPath, secret+"\n"); err != nil {
			return st, err
		}
	}
	return st, nil
}

func ptr[T any](v T) *T { return &v }

// topUp deposits what wallet lacks of want in env, and returns the
// balance available then. An environment on a chain, configured now or in
// an earlier run, takes money only from the chain: the demo wallet is
// funded there by crtx deposit, not here, and chained says so.
func topUp(ctx context.Context, m *market.Market, env crtx.Environment, wallet string, want crtx.USDC) (have crtx.USDC, chained bool, err error) {
	b, err := m.Funds.Balances(ctx, wallet, env)
	if err != nil {
		return 0, false, err
	}
	have = b[env].Available
	if m.Chain(env) != nil {
		return have, true, nil
	}
	if have >= want {
		return have, false, nil
	}
	f, err := m.Funds.OperatorDeposit(ctx, env, wallet, want-have)
	if crtx.ErrorCode(err) == crtx.CodeChainConfigured {
		return have, true, nil
	}
	return f.Balance.Available, false, err
}

// demoFunds says what the demo wallet holds in each environment and where
// it comes from: the top-up, or deposits paid on the environment's chain.
func demoFunds(st devState) string {
	const topped, paid = "topped up on each start", "paid in on its chain"
	switch devnet, mainnet := st.chained[crtx.Devnet], st.chained[crtx.Mainnet]; {
	case devnet && mainnet:
		return fmt.Sprintf("%s USDC on devnet and %s on mainnet, paid in on their chains", st.devnet, st.mainnet)
	case devnet:
		return fmt.Sprintf("%s USDC on devnet, %s, and %s on mainnet, %s", st.devnet, paid, st.mainnet, topped)
	case mainnet:
		return fmt.Sprintf("%s USDC on devnet, %s, and %s on mainnet, %s", st.devnet, topped, st.mainnet, paid)
	}
	return fmt.Sprintf("%s USDC on devnet and %s on mainnet, %s", st.devnet, st.mainnet, topped)
}
