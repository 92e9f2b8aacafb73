package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
	"github.com/spf13/cobra"
)

// errLedgerFailed is crtxd ledger verify's exit 1 once it has printed
// what it found.
var errLedgerFailed = errors.New("the ledger failed verification")

func ledgerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Verify the ledger, deposit or withdraw funds",
		Long: `Verify the ledger's blocks and balances, or move funds in and out of a wallet as the
operator. These commands open the store of --data/--db directly; they run beside crtxd serve.`,
	}
	return cmdline.Group(cmd, verifyCommand(), fundingCommand("deposit"), fundingCommand("withdraw"))
}

func verifyCommand() *cobra.Command {
	cfg := daemon.Defaults()
	var envFlag string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the ledger's blocks, signatures and balances",
		Long: `Check every block's hash, Merkle root and authority signature, and that every account's
balance is what its postings give and all of them sum to zero. It prints one line per environment
and every problem found, and exits 1 when there is one.`,
		Example: `  crtxd ledger verify --data /var/lib/crtx
  crtxd ledger verify --environment mainnet --db postgres://crtx@db/crtx --data /etc/crtx`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			envs := crtx.Environments
			if envFlag != "" {
				env, err := crtx.ParseEnvironment("--environment", envFlag)
				if err != nil {
					return err
				}
				envs = []crtx.Environment{env}
			}
			ok, err := verify(cmd.Context(), cfg, envs, cmd.OutOrStdout())
			if err == nil && !ok {
				err = errLedgerFailed
			}
			return err
		},
	}
	storeFlags(cmd.Flags(), &cfg)
	cmd.Flags().StringVar(&envFlag, "environment", "", "mainnet or devnet; both when empty")
	return cmd
}

// verify checks envs and prints each problem it finds.
func verify(ctx context.Context, cfg daemon.Config, envs []crtx.Environment, stdout io.Writer) (bool, error) {
	if err := cfg.Validate(); err != nil {
		return false, err
	}
	if err := daemon.CheckExisting(ctx, cfg); err != nil {
		return false, err
	}
	keys, err := daemon.LoadKeys(cfg.Data, false)
	if err != nil {
		return false, err
	}
	store, err := daemon.OpenStore(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer store.Close()
	ok := true
	for _, env := range envs {
		r, err := market.VerifyLedger(ctx, store, env, keys.Authority.Public().(ed25519.PublicKey))
		if err != nil {
			return false, err
		}
		status := "ok"
		if !r.OK() {
			status, ok = "FAILED", false
		}
		fmt.Fprintf(stdout, "%s: %s — %d blocks, %d transactions, %d accounts summing to %s\n",
			env, status, r.Blocks, r.Transactions, r.Accounts, r.Sum)
		if r.Unposted > 0 {
			fmt.Fprintf(stdout, "  %s: %d transactions wait for the roll-up to post %s USDC of credits (counted in the sum)\n",
				env, r.Unposted, r.Pending)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(stdout, "  %s: %s\n", env, p)
		}
	}
	return ok, nil
}

// fundingCommand is crtxd ledger deposit or withdraw; they differ in
// their words and the market method they call.
func fundingCommand(name string) *cobra.Command {
	var envFlag, wallet, amountFlag string
	short, example := "Credit a wallet with funds received", "deposit --environment mainnet --wallet W --amount 25.5"
	if name == "withdraw" {
		short, example = "Debit a wallet for funds paid out", "withdraw --environment mainnet --wallet W --amount 10"
	}
	cmd := offline(&cobra.Command{
		Use:     name + " --environment E --wallet W --amount A",
		Short:   short,
		Example: "  crtxd ledger " + example + " --data /var/lib/crtx",
		Args:    cmdline.Args(),
	}, func(ctx context.Context, m *market.Market, out io.Writer, _ []string) error {
		env, err := crtx.ParseEnvironment("--environment", envFlag)
		if err != nil {
			return err
		}
		amount, err := crtx.ParseUSDC(amountFlag)
		if err != nil {
			return fmt.Errorf("--amount: %w", err)
		}
		move := m.Funds.OperatorDeposit
		if name == "withdraw" {
			move = m.Funds.OperatorWithdraw
		}
		f, err := move(ctx, env, wallet, amount)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s: %s USDC for %s; available %s USDC\n", env, f.Transaction.Kind, amount, wallet, f.Balance.Available)
		return nil
	})
	cmd.Flags().StringVar(&envFlag, "environment", "", "mainnet or devnet")
	cmd.Flags().StringVar(&wallet, "wallet", "", "the wallet's address (base58)")
	cmd.Flags().StringVar(&amountFlag, "amount", "", "amount in USDC, up to 6 decimals, e.g. 25.5")
	for _, f := range []string{"environment", "wallet", "amount"} {
		cmd.MarkFlagRequired(f)
	}
	return cmd
}
