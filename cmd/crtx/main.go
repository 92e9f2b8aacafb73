// Command crtx is the command line of a crtx marketplace for callers and
// creators: wallets and sign-in, API keys, funds, browsing and running
// agents, executions, verification, disputes, and listing agents.
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: crtx [--url URL] [--api-key KEY] [--keypair FILE] [--profile NAME] [--json] <command>

wallet and funds
  wallet new | import FILE | show     a wallet key file (Solana CLI format, mode 0600)
  login                               sign in with the wallet; prints a session token
  balance                             balances (with an API key: that key's environment)
  airdrop AMOUNT                      devnet USDC for the wallet
  keys create NAME ENVIRONMENT [--spend-limit USDC] | list | revoke ID

callers
  agents list [--tags a,b] [--q TEXT] [--sort S] [--min-success-rate R] [--min-executions N]
              [--verified-only] [--environment E] [--limit N] [--offset N]
  agents show AGENT_ID [--environment E]
  run AGENT_ID TASK [--param k=v]... [--params-file F] [--async] [--timeout S] [--max-cost USDC]
  executions list [--status S] [--agent AGENT_ID] [--from T] [--to T] [--limit N] [--offset N]
  executions show ID | watch ID
  verify EXECUTION_ID                 check result, signature and ledger record
  dispute EXECUTION_ID --reason hash_mismatch|fraud|other --description TEXT [--evidence-file F]

creators
  creator keygen [--out FILE]         a new signing key for an agent
  creator list | earnings [--environment E]
  creator create --file LISTING.json
  creator update AGENT_ID --file CHANGES.json | pause AGENT_ID | resume AGENT_ID | delist AGENT_ID
  creator test --endpoint URL --public-key KEY

Settings come from flags, then CRTX_URL, CRTX_API_KEY, CRTX_KEYPAIR and CRTX_PROFILE, then the
profile in ~/.config/crtx/config.json ({"profile": "dev", "profiles": {"dev": {"url", "api_key",
"keypair"}}}). With --json a command prints the REST response body it received, unchanged.
`

// profile is one entry of the config file.
type profile struct {
	URL     string `json:"url"`
	APIKey  string `json:"api_key"`
	Keypair string `json:"keypair"`
}

type config struct {
	Profile  string             `json:"profile"`
	Profiles map[string]profile `json:"profiles"`
}

func configDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "."
	}
	return filepath.Join(dir, "crtx")
}

// loadProfile reads the named (or default) profile; a missing file is no profile.
func loadProfile(name string) (profile, error) {
	path := os.Getenv("CRTX_CONFIG")
	if path == "" {
		path = filepath.Join(configDir(), "config.json")
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if name != "" {
			return profile{}, fmt.Errorf("profile %q: %s does not exist", name, path)
		}
		return profile{}, nil
	}
	if err != nil {
		return profile{}, err
	}
	var c config
	if err := json.Unmarshal(b, &c); err != nil {
		return profile{}, fmt.Errorf("%s: %w", path, err)
	}
	if name == "" {
		name = c.Profile
	}
	if name == "" {
		return profile{}, nil
	}
	p, ok := c.Profiles[name]
	if !ok {
		return profile{}, fmt.Errorf("%s has no profile %q", path, name)
	}
	return p, nil
}

type cli struct {
	url, keypair, apiKey string
	json                 bool
	out, errOut          io.Writer
	last                 []byte // the last response body, for --json
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{out: stdout, errOut: stderr}
	fs := flag.NewFlagSet("crtx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	urlFlag := fs.String("url", "", "marketplace URL (CRTX_URL)")
	keyFlag := fs.String("api-key", "", "API key (CRTX_API_KEY)")
	kpFlag := fs.String("keypair", "", "wallet key file (CRTX_KEYPAIR)")
	profFlag := fs.String("profile", "", "profile of the config file (CRTX_PROFILE)")
	fs.BoolVar(&c.json, "json", false, "print the REST response body")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	p, err := loadProfile(firstOf(*profFlag, os.Getenv("CRTX_PROFILE")))
	if err != nil {
		fmt.Fprintf(stderr, "crtx: %v\n", err)
		return 2
	}
	c.url = strings.TrimRight(firstOf(*urlFlag, os.Getenv("CRTX_URL"), p.URL, "http://127.0.0.1:8080"), "/")
	c.apiKey = firstOf(*keyFlag, os.Getenv("CRTX_API_KEY"), p.APIKey)
	c.keypair = firstOf(*kpFlag, os.Getenv("CRTX_KEYPAIR"), p.Keypair, filepath.Join(configDir(), "id.json"))
	if err := c.dispatch(ctx, fs.Args()); err != nil {
		var ce *client.Error
		switch {
		case errors.As(err, &ce):
			fmt.Fprintf(stderr, "crtx: %s: %s", ce.Code, ce.Message)
			if ce.ExecutionID != nil {
				fmt.Fprintf(stderr, " (execution %s)", *ce.ExecutionID)
			}
			fmt.Fprintln(stderr)
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "crtx: %v\n\n%s", err, usage)
			return 2
		default:
			fmt.Fprintf(stderr, "crtx: %v\n", err)
		}
		return 1
	}
	return 0
}

var errUsage = errors.New("wrong arguments")

// api is a client for the marketplace with a credential, remembering each
// response body for --json.
func (c *cli) api(token string) *client.Client {
	return client.New(c.url, token).OnResponse(func(_ int, body []byte) { c.last = body })
}

// key is a client acting with the API key.
func (c *cli) key() (*client.Client, error) {
	if c.apiKey == "" {
		return nil, errors.New("this command needs an API key: set CRTX_API_KEY or --api-key (create one with: crtx keys create NAME devnet)")
	}
	return c.api(c.apiKey), nil
}

// wallet loads the wallet key file.
func (c *cli) wallet() (ed25519.PrivateKey, string, error) {
	key, err := keyfile.Load(c.keypair)
	if err != nil {
		return nil, "", fmt.Errorf("%w (create a wallet with: crtx wallet new)", err)
	}
	return key, crtx.Address(key.Public().(ed25519.PublicKey)), nil
}

// session signs in with the wallet key file and returns a client acting
// with the new session.
func (c *cli) session(ctx context.Context) (*client.Client, error) {
	key, _, err := c.wallet()
	if err != nil {
		return nil, err
	}
	s, _, err := c.api("").SignIn(ctx, key)
	return s, err
}

// print writes, with --json, the last response body as received (or v as
// JSON for commands that ask nothing of the marketplace); else the text.
func (c *cli) print(v any, format string, args ...any) error {
	if c.json {
		if c.last != nil {
			_, err := c.out.Write(append(c.last[:len(c.last):len(c.last)], '\n'))
			return err
		}
		enc := json.NewEncoder(c.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(c.out, format, args...)
	return err
}

type command func(ctx context.Context, args []string) error

func (c *cli) dispatch(ctx context.Context, args []string) error {
	commands := map[string]command{
		"wallet new": c.walletNew, "wallet import": c.walletImport, "wallet show": c.walletShow,
		"login": c.login, "balance": c.balance, "airdrop": c.airdrop,
		"keys create": c.keysCreate, "keys list": c.keysList, "keys revoke": c.keysRevoke,
		"agents list": c.agentsList, "agents show": c.agentsShow,
		"run": c.run, "executions list": c.executionsList, "executions show": c.executionsShow,
		"executions watch": c.executionsWatch, "verify": c.verify, "dispute": c.dispute,
		"creator keygen": c.creatorKeygen, "creator list": c.creatorList, "creator create": c.creatorCreate,
		"creator update": c.creatorUpdate, "creator pause": c.creatorStatus("paused"), "creator resume": c.creatorStatus("active"),
		"creator delist": c.creatorDelist, "creator earnings": c.creatorEarnings, "creator test": c.creatorTest,
	}
	if len(args) > 1 {
		if cmd, ok := commands[args[0]+" "+args[1]]; ok {
			return cmd(ctx, args[2:])
		}
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(ctx, args[1:])
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, strings.Join(args, " "))
}

// parseInterleaved parses flags that may come after positional arguments
// ("keys create ci devnet --spend-limit 5") and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flags returns a flag set for a sub-command that reports to stderr.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.errOut)
	return fs
}

// positional parses args and demands exactly n positionals.
func (c *cli) positional(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(pos) != n {
		return nil, fmt.Errorf("%w: %s takes %d argument(s)", errUsage, fs.Name(), n)
	}
	return pos, nil
}
