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
	"strings"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes: 0 done, 1 the command failed, 2 it was given wrong arguments,
// 130 it was interrupted (as shells report Ctrl-C).
const (
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{out: stdout, errOut: stderr}
	root := c.root()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	var ce *client.Error
	var ue usageError
	switch {
	case !c.started || errors.As(err, &ue):
		// Cobra refused the command line before any command ran: an unknown
		// command or flag, a missing argument.
		fmt.Fprintf(stderr, "crtx: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
		return exitUsage
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "crtx: %s: %s", ce.Code, ce.Message)
		if ce.ExecutionID != nil {
			fmt.Fprintf(stderr, " (execution %s)", *ce.ExecutionID)
		}
		fmt.Fprintln(stderr)
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "crtx: interrupted")
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "crtx: %v\n", err)
	}
	return exitFailed
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
  crtx run AGENT_ID "Summarise this text" --param lang=en`,
		Version:       crtx.Version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// Cobra checks required flags only after this hook; a missing one
			// is a wrong command line, like a missing argument.
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return err
			}
			c.started = true
			return c.configure(cmd.Name() == "login")
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&c.flags.url, "url", "", "marketplace URL (CRTX_URL; default http://127.0.0.1:8080)")
	f.StringVar(&c.flags.apiKey, "api-key", "", "API key, crtx_live_… (mainnet) or crtx_test_… (devnet) (CRTX_API_KEY)")
	f.StringVar(&c.flags.keypair, "keypair", "", "wallet key file, Solana CLI format (CRTX_KEYPAIR; default ~/.config/crtx/id.json)")
	f.StringVar(&c.flags.profile, "profile", "", "profile of the config file to use (CRTX_PROFILE)")
	f.BoolVar(&c.json, "json", false, "print the REST response body as received, for scripts")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddGroup(&cobra.Group{ID: "wallet", Title: "Wallet and keys:"}, &cobra.Group{ID: "callers", Title: "Callers:"},
		&cobra.Group{ID: "creators", Title: "Creators:"})
	root.SetHelpCommandGroupID("")
	for _, cmd := range []*cobra.Command{c.walletCmd(), c.loginCmd(), c.sessionCmd(), c.balanceCmd(), c.airdropCmd(), c.keysCmd()} {
		cmd.GroupID = "wallet"
		root.AddCommand(cmd)
	}
	for _, cmd := range []*cobra.Command{c.agentsCmd(), c.runCmd(), c.executionsCmd(), c.verifyCmd(), c.disputeCmd()} {
		cmd.GroupID = "callers"
		root.AddCommand(cmd)
	}
	creator := c.creatorCmd()
	creator.GroupID = "creators"
	root.AddCommand(creator)
	return root
}

// group makes cmd a command that only holds others: alone it prints its
// help; with an argument it is an unknown sub-command, with suggestions.
func group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		cmd.SuggestionsMinimumDistance = 2 // cobra sets it on the root only
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
		}
		return usageError(msg)
	}
	cmd.AddCommand(subs...)
	return cmd
}

// usageError is a wrong command line found after cobra accepted it.
type usageError string

func (e usageError) Error() string { return string(e) }

// args demands exactly n positional arguments, named in the message.
func args(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return fmt.Errorf("%s takes %d argument(s), %s; got %d", cmd.CommandPath(), len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}
