// Command crtx is the command line of a crtx marketplace for callers and
// creators: wallets and sign-in, API keys, funds, browsing and running
// agents, executions, verification, disputes, and listing agents.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{out: stdout, errOut: stderr}
	return cmdline.Run(ctx, c.root(), args, nil, stdin, stdout, stderr, func(err error) int {
		var ce *client.Error
		switch {
		case errors.As(err, &ce):
			fmt.Fprintf(stderr, "crtx: %s: %s", ce.Code, ce.Message)
			if ce.ExecutionID != nil {
				fmt.Fprintf(stderr, " (execution %s)", *ce.ExecutionID)
			}
			fmt.Fprintln(stderr)
			if h := c.hint(ce); h != "" {
				fmt.Fprintf(stderr, "crtx: %s\n", h)
			}
		case ctx.Err() != nil:
			fmt.Fprintln(stderr, "crtx: interrupted")
			return cmdline.ExitInterrupted
		default:
			fmt.Fprintf(stderr, "crtx: %v\n", err)
		}
		return cmdline.ExitFailed
	})
}

// root builds the command tree.
func (c *cli) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "crtx",
		Short: "Browse, run and verify paid AI agents, and list your own",
		Long: `crtx is the command line of a crtx marketplace: a wallet and API keys, browsing
and running agents (paid from the wallet through an escrow), checking each result's
hash, signature and ledger record, and, for creators, listing agents.

Settings come from flags, then CRTX_URL, CRTX_API_KEY, CRTX_KEYPAIR and CRTX_PROFILE,
then the profile that 'crtx login' saves in ~/.config/crtx/config.json (CRTX_CONFIG
names another file).`,
		Example: `  crtx wallet new && crtx airdrop 50
  crtx login --environment devnet
  crtx agents list --tags data --sort success_rate
  crtx run AGENT_ID "The quick brown fox jumps over the lazy dog." --param top=3`,
		Version: crtx.Version(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return c.configure(cmd.Name() == "login")
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&c.flags.url, "url", "", "marketplace URL (CRTX_URL; default http://127.0.0.1:8080)")
	f.StringVar(&c.flags.apiKey, "api-key", "", "API key, crtx_live_… (mainnet) or crtx_test_… (devnet) (CRTX_API_KEY)")
	f.StringVar(&c.flags.keypair, "keypair", "", "wallet key file, Solana CLI format (CRTX_KEYPAIR; default ~/.config/crtx/id.json)")
	f.StringVar(&c.flags.profile, "profile", "", "profile of the config file to use (CRTX_PROFILE)")
	f.BoolVar(&c.json, "json", false, "print the REST response body as received, for scripts")
	root.AddGroup(&cobra.Group{ID: "wallet", Title: "Wallet and keys:"}, &cobra.Group{ID: "callers", Title: "Callers:"},
		&cobra.Group{ID: "creators", Title: "Creators:"})
	root.SetHelpCommandGroupID("")
	for _, cmd := range []*cobra.Command{c.walletCmd(), c.loginCmd(), c.sessionCmd(), c.balanceCmd(), c.airdropCmd(), c.depositCmd(), c.withdrawCmd(), c.depositsCmd(), c.withdrawalsCmd(), c.keysCmd()} {
		cmd.GroupID = "wallet"
		root.AddCommand(cmd)
	}
	for _, cmd := range []*cobra.Command{c.agentsCmd(), c.runCmd(), c.executionsCmd(), c.verifyCmd(), c.disputeCmd()} {
		cmd.GroupID = "callers"
		root.AddCommand(cmd)
	}
	creator := c.creatorCmd()
	creator.GroupID = "creators"
	return cmdline.Group(root, creator)
}
