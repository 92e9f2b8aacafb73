package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// adminCommand holds the operator's commands, run against the store
// directly: they take the same --data and --db as every crtxd command.
func adminCommand() *cobra.Command {
	group := func(use, short string, cmds ...*cobra.Command) *cobra.Command {
		return cmdline.Group(&cobra.Command{Use: use, Short: short}, cmds...)
	}
	cmd := group("admin", "Resolve disputes, verify creators, suspend agents, release collateral")
	cmd.Long = `The operator's tools. They open the store of --data/--db directly, so they need no admin
token; the admin API (--admin-token-file) offers the same over HTTP.`
	cmd.AddCommand(
		group("disputes", "List and resolve disputes", disputesListCommand(), disputesResolveCommand()),
		group("creators", "Mark creators verified or not",
			setCommand("verify WALLET", "Mark a creator verified (the badge on their listings)", true, setVerified),
			setCommand("unverify WALLET", "Take a creator's verified badge away", false, setVerified)),
		group("agents", "Suspend agents or lift a suspension",
			setCommand("suspend AGENT_ID", "Take an agent out of the catalog and refuse its executions", true, suspend),
			setCommand("unsuspend AGENT_ID", "Lift an agent's suspension", false, suspend)),
		group("deposits", "Find USDC that reached the treasury with no deposit's reference", unattributedCommand()),
		group("collateral", "Release delisted agents' collateral", offline(&cobra.Command{
			Use:   "release",
			Short: "Release the collateral due now, without waiting for the release job",
			Args:  cmdline.Args(),
		}, func(ctx context.Context, m *market.Market, out io.Writer, _ []string) error {
			n, err := m.Listings.ReleaseCollateral(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "released the collateral of %d listings\n", n)
			return nil
		})),
	)
	return cmd
}

// offline gives cmd the store flags and a RunE that opens the existing
// store and hands its market to fn.
func offline(cmd *cobra.Command, fn func(ctx context.Context, m *market.Market, out io.Writer, args []string) error) *cobra.Command {
	return offlineWith(cmd, nil, fn)
}

// offlineWith is offline with more flags bound to the configuration.
func offlineWith(cmd *cobra.Command, flags func(*pflag.FlagSet, *daemon.Config),
	fn func(ctx context.Context, m *market.Market, out io.Writer, args []string) error) *cobra.Command {
	cfg := daemon.Defaults()
	storeFlags(cmd.Flags(), &cfg)
	if flags != nil {
		flags(cmd.Flags(), &cfg)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		m, store, err := daemon.OpenExisting(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		defer store.Close()
		return fn(cmd.Context(), m, cmd.OutOrStdout(), args)
	}
	return cmd
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func disputesListCommand() *cobra.Command {
	var status string
	cmd := offline(&cobra.Command{
		Use:     "list",
		Short:   "List disputes, newest first",
		Example: "  crtxd admin disputes list --status open --data /var/lib/crtx",
		Args:    cmdline.Args(),
	}, func(ctx context.Context, m *market.Market, out io.Writer, _ []string) error {
		ds, err := m.Disputes.Disputes(ctx, crtx.DisputeQuery{Status: status, Limit: 1000})
		if err != nil {
			return err
		}
		for _, d := range ds {
			fmt.Fprintf(out, "%s  %-8s %-13s %s  respond by %s  execution %s\n", d.ID, d.Status, d.Reason, d.Environment,
				d.RespondBy.Format("2006-01-02 15:04Z"), d.ExecutionID)
		}
		return nil
	})
	cmd.Flags().StringVar(&status, "status", "", "only disputes in this status: open, upheld or rejected")
	return cmd
}

func disputesResolveCommand() *cobra.Command {
	var outcome, slash, refund string
	cmd := offline(&cobra.Command{
		Use:   "resolve DISPUTE_ID --outcome upheld|rejected",
		Short: "Rule on a dispute",
		Long: `Rule on a dispute. Upheld: --slash takes USDC from the listing's collateral, of which
--refund (at most the slash) goes to the caller and the rest to the treasury. Rejected: the
execution is completed again, and nothing is slashed or refunded.`,
		Example: "  crtxd admin disputes resolve dsp_… --outcome upheld --slash 5 --refund 0.5 --data /var/lib/crtx",
		Args:    cmdline.Args("DISPUTE_ID"),
	}, func(ctx context.Context, m *market.Market, out io.Writer, args []string) error {
		p := crtx.ResolveParams{Outcome: outcome}
		var err error
		if p.Slash, err = optionalUSDC(slash); err != nil {
			return fmt.Errorf("--slash: %w", err)
		}
		if p.Refund, err = optionalUSDC(refund); err != nil {
			return fmt.Errorf("--refund: %w", err)
		}
		d, err := m.Disputes.ResolveDispute(ctx, args[0], p)
		if err != nil {
			return err
		}
		return printJSON(out, api.NewDisputeInfo(d))
	})
	cmd.Flags().StringVar(&outcome, "outcome", "", "upheld or rejected")
	cmd.Flags().StringVar(&slash, "slash", "", "USDC to slash from the agent's collateral")
	cmd.Flags().StringVar(&refund, "refund", "", "USDC of the slash refunded to the caller")
	cmd.MarkFlagRequired("outcome")
	return cmd
}

// optionalUSDC parses an amount flag that may be left out.
func optionalUSDC(s string) (*crtx.USDC, error) {
	if s == "" {
		return nil, nil
	}
	v, err := crtx.ParseUSDC(s)
	return &v, err
}

func setVerified(ctx context.Context, m *market.Market, wallet string, on bool) (any, error) {
	c, err := m.Listings.SetVerified(ctx, wallet, on)
	return api.NewCreatorProfile(c), err
}

func suspend(ctx context.Context, m *market.Market, id string, on bool) (any, error) {
	a, err := m.Listings.Suspend(ctx, id, on)
	return api.NewCreatorAgent(a, m.Links()), err
}

// setCommand is a command that turns one thing about one creator or agent
// on or off and prints it as JSON.
func setCommand(use, short string, on bool, set func(ctx context.Context, m *market.Market, id string, on bool) (any, error)) *cobra.Command {
	return offline(&cobra.Command{Use: use, Short: short, Args: cmdline.Args(strings.Fields(use)[1:]...)},
		func(ctx context.Context, m *market.Market, out io.Writer, args []string) error {
			v, err := set(ctx, m, args[0], on)
			if err != nil {
				return err
			}
			return printJSON(out, v)
		})
}

func unattributedCommand() *cobra.Command {
	var env string
	var limit int
	cmd := offlineWith(&cobra.Command{
		Use:   "unattributed",
		Short: "List transfers into the treasury that carry no deposit's reference: return or attribute them, never keep them",
		Example: `  crtxd admin deposits unattributed --environment mainnet --solana-rpc-mainnet https://api.mainnet-beta.solana.com \
      --treasury-keypair treasury.json --data /var/lib/crtx`,
		Args: cmdline.Args(),
	}, chainFlags, func(ctx context.Context, m *market.Market, out io.Writer, _ []string) error {
		e, err := crtx.ParseEnvironment("--environment", env)
		if err != nil {
			return err
		}
		ps, err := m.Funds.Unattributed(ctx, e, limit)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			fmt.Fprintf(out, "every one of the last %d transfers into the %s treasury is attributed\n", limit, e)
			return nil
		}
		fmt.Fprintf(out, "%-88s  %-12s  %-44s  %s\n", "SIGNATURE", "USDC", "FROM", "SLOT")
		for _, p := range ps {
			fmt.Fprintf(out, "%-88s  %-12s  %-44s  %d\n", p.Signature, p.Amount, p.From, p.Slot)
		}
		return nil
	})
	cmd.Flags().StringVar(&env, "environment", "mainnet", "mainnet or devnet")
	cmd.Flags().IntVar(&limit, "limit", 100, "how many of the newest transfers into the treasury to read")
	return cmd
}
