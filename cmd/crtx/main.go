// Command crtx is the command line for callers and creators of a crtx
// marketplace. It starts small: a wallet, sign-in, API keys, devnet funds
// and balances.
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

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: crtx [--url URL] [--keypair FILE] [--json] <command>

commands:
  wallet new                    create a wallet key file (Solana CLI format, mode 0600)
  wallet show                   print the wallet address
  login                         sign in with the wallet and print a session token
  balance                       show balances (with CRTX_API_KEY: that key's environment)
  airdrop AMOUNT                get devnet USDC for the wallet
  keys create NAME ENVIRONMENT [--spend-limit USDC]
  keys list
  keys revoke ID
  verify EXECUTION_ID           verify an execution's result, signature and ledger record (needs CRTX_API_KEY)
  creator test --endpoint URL --public-key KEY
                                run the Test Execution tool on a creator endpoint

CRTX_URL and CRTX_API_KEY set the marketplace and the API key.
`

type cli struct {
	url, keypair, apiKey string
	json                 bool
	out, errOut          io.Writer
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := cli{out: stdout, errOut: stderr, apiKey: os.Getenv("CRTX_API_KEY")}
	fs := flag.NewFlagSet("crtx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&c.url, "url", envOr("CRTX_URL", "http://127.0.0.1:8080"), "marketplace URL")
	fs.StringVar(&c.keypair, "keypair", defaultKeypair(), "wallet key file")
	fs.BoolVar(&c.json, "json", false, "print the REST response body")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if err := c.dispatch(ctx, fs.Args()); err != nil {
		if code := client.Code(err); code != "" {
			fmt.Fprintf(stderr, "crtx: %s: %v\n", code, err)
		} else {
			fmt.Fprintf(stderr, "crtx: %v\n", err)
		}
		return 1
	}
	return 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func defaultKeypair() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "crtx-wallet.json"
	}
	return filepath.Join(dir, "crtx", "id.json")
}

var errUsage = errors.New("wrong arguments; run crtx without arguments for help")

func (c cli) dispatch(ctx context.Context, args []string) error {
	cmd := args[0]
	if len(args) > 1 && (cmd == "wallet" || cmd == "keys" || cmd == "creator") {
		cmd += " " + args[1]
		args = args[1:]
	}
	rest := args[1:]
	switch cmd {
	case "wallet new":
		_, key, err := ed25519.GenerateKey(nil)
		if err != nil {
			return err
		}
		if err := keyfile.Write(c.keypair, key); err != nil {
			return err
		}
		return c.print(map[string]string{"wallet": crtx.Address(key.Public().(ed25519.PublicKey)), "keypair": c.keypair},
			"wallet %s written to %s\n", crtx.Address(key.Public().(ed25519.PublicKey)), c.keypair)
	case "wallet show":
		key, err := keyfile.Load(c.keypair)
		if err != nil {
			return err
		}
		addr := crtx.Address(key.Public().(ed25519.PublicKey))
		return c.print(map[string]string{"wallet": addr}, "%s\n", addr)
	case "login":
		_, s, err := c.session(ctx)
		if err != nil {
			return err
		}
		return c.print(s, "%s\n", s.SessionToken)
	case "balance":
		var api *client.Client
		var err error
		if c.apiKey != "" {
			api = client.New(c.url, c.apiKey)
		} else if api, _, err = c.session(ctx); err != nil {
			return err
		}
		w, err := api.Wallet(ctx)
		if err != nil {
			return err
		}
		text := ""
		for _, env := range crtx.Environments {
			if b, ok := w.Balances[env]; ok {
				text += fmt.Sprintf("%-8s %s USDC available, %s USDC in escrow\n", env, b.Available, b.Escrowed)
			}
		}
		return c.print(w, "%s", text)
	case "airdrop":
		if len(rest) != 1 {
			return errUsage
		}
		amount, err := crtx.ParseUSDC(rest[0])
		if err != nil {
			return err
		}
		key, err := keyfile.Load(c.keypair)
		if err != nil {
			return err
		}
		f, err := client.New(c.url, "").Airdrop(ctx, crtx.Address(key.Public().(ed25519.PublicKey)), amount)
		if err != nil {
			return err
		}
		return c.print(f, "airdropped %s USDC on devnet; available %s USDC\n", f.Amount, f.Balance.Available)
	case "keys create":
		fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
		fs.SetOutput(c.errOut)
		limit := fs.String("spend-limit", "", "most the key may spend, in USDC")
		pos, err := parseInterleaved(fs, rest)
		if err != nil || len(pos) != 2 {
			return errUsage
		}
		p := client.KeyParams{Name: pos[0], Environment: crtx.Environment(pos[1])}
		if *limit != "" {
			l, err := crtx.ParseUSDC(*limit)
			if err != nil {
				return err
			}
			p.SpendLimit = &l
		}
		api, _, err := c.session(ctx)
		if err != nil {
			return err
		}
		k, err := api.CreateKey(ctx, p)
		if err != nil {
			return err
		}
		return c.print(k, "%s\n(shown only now; keep it in a secrets store)\n", k.Key)
	case "keys list":
		api, _, err := c.session(ctx)
		if err != nil {
			return err
		}
		keys, err := api.Keys(ctx)
		if err != nil {
			return err
		}
		text := ""
		for _, k := range keys {
			state := "active"
			if k.RevokedAt != nil {
				state = "revoked"
			}
			text += fmt.Sprintf("%s  %-8s %s…  %-7s %s\n", k.ID, k.Environment, k.Prefix, state, k.Name)
		}
		return c.print(crtx.KeyList{Keys: keys}, "%s", text)
	case "keys revoke":
		if len(rest) != 1 {
			return errUsage
		}
		api, _, err := c.session(ctx)
		if err != nil {
			return err
		}
		k, err := api.RevokeKey(ctx, rest[0])
		if err != nil {
			return err
		}
		return c.print(k, "revoked %s\n", k.ID)
	case "creator test":
		return c.creatorTest(ctx, rest)
	case "verify":
		if len(rest) != 1 || c.apiKey == "" {
			return fmt.Errorf("usage: CRTX_API_KEY=… crtx verify EXECUTION_ID")
		}
		rep, err := client.New(c.url, c.apiKey).Verify(ctx, rest[0])
		if err != nil {
			return err
		}
		text := ""
		for _, ch := range rep.Checks {
			mark := "ok    "
			if !ch.OK {
				mark = "FAILED"
			}
			text += fmt.Sprintf("%s %-18s %s\n", mark, ch.Name, ch.Detail)
		}
		if err := c.print(rep, "%s", text); err != nil {
			return err
		}
		if !rep.OK() {
			return errors.New("verification failed")
		}
		return nil
	}
	return errUsage
}

// errFailed ends a command that ran but found problems; its report is printed.
var errFailed = errors.New("the endpoint did not pass")

// creatorTest asks the marketplace to send a synthetic, signed request to
// the endpoint and prints what came back. It exits 0 only when the reply
// has the protocol's shape and a valid signature.
func (c cli) creatorTest(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("creator test", flag.ContinueOnError)
	fs.SetOutput(c.errOut)
	endpoint := fs.String("endpoint", "", "the creator's POST /execute URL")
	pub := fs.String("public-key", "", "the base58 Ed25519 key results must be signed with")
	if err := fs.Parse(args); err != nil || *endpoint == "" || *pub == "" || fs.NArg() != 0 {
		return errUsage
	}
	api, _, err := c.session(ctx)
	if err != nil {
		return err
	}
	rep, err := api.TestExecution(ctx, *endpoint, *pub)
	if err != nil {
		return err
	}
	mark := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "FAILED"
	}
	text := fmt.Sprintf("endpoint   %s\nreachable  %s (%d ms)\nshape      %s\nsignature  %s\n",
		*endpoint, mark(rep.Reachable), rep.LatencyMS, mark(rep.ShapeOK), mark(rep.SignatureOK))
	if rep.Status != "" {
		text += "status     " + rep.Status + "\n"
	}
	for _, p := range rep.Problems {
		text += "problem    " + p + "\n"
	}
	if err := c.print(rep, "%s", text); err != nil {
		return err
	}
	if !rep.Reachable || !rep.ShapeOK || !rep.SignatureOK {
		return errFailed
	}
	return nil
}

// session signs in with the wallet key file.
func (c cli) session(ctx context.Context) (*client.Client, crtx.SessionResponse, error) {
	key, err := keyfile.Load(c.keypair)
	if err != nil {
		return nil, crtx.SessionResponse{}, fmt.Errorf("%w (create one with: crtx wallet new)", err)
	}
	return client.New(c.url, "").SignIn(ctx, key)
}

// print writes v as JSON with --json, else the formatted text.
func (c cli) print(v any, format string, args ...any) error {
	if c.json {
		enc := json.NewEncoder(c.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(c.out, format, args...)
	return err
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
