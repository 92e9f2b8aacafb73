package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
)

func (c *cli) depositCmd() *cobra.Command {
	var env, rpc string
	var pay bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "deposit AMOUNT",
		Short: "Add USDC to the wallet from Solana: a Solana Pay request to scan or open, or --pay from the key file",
		Long: `deposit asks the marketplace for a Solana Pay transfer request of AMOUNT USDC, prints
its URL and a QR code that a phone wallet scans, and waits until the payment is
finalized on the chain and credited. With --pay, the wallet key file (a Solana key)
pays it itself, through --rpc: its USDC token account must hold the amount and its
SOL the fee.`,
		Example: `  crtx deposit 25
  crtx deposit 25 --pay --rpc https://api.mainnet-beta.solana.com`,
		Args: cmdline.Args("AMOUNT"),
		RunE: func(cmd *cobra.Command, a []string) error {
			ctx := cmd.Context()
			amount, err := crtx.ParseUSDC(a[0])
			if err != nil {
				return err
			}
			cl, e, err := c.listClient(ctx, env)
			if err != nil {
				return err
			}
			d, err := cl.NewDeposit(ctx, e, amount)
			if err != nil {
				return err
			}
			if c.json {
				return c.print(d, "")
			}
			fmt.Fprintf(c.out, "Pay %s USDC to %s on %s's chain:\n\n  %s\n\n", d.Amount, d.Recipient, d.Environment, d.SolanaPayURL)
			if !pay {
				if q, err := terminalQR(d.SolanaPayURL); err == nil {
					fmt.Fprintln(c.out, q)
				}
			} else {
				key, _, err := c.wallet()
				if err != nil {
					return err
				}
				if rpc == "" {
					return fmt.Errorf("--pay needs --rpc (or CRTX_SOLANA_RPC): the Solana JSON-RPC URL of %s's chain", e)
				}
				fmt.Fprintf(c.out, "paying from %s through %s…\n", crtx.Address(key.Public().(ed25519.PublicKey)), rpc)
				sig, err := chain.Pay(ctx, rpc, key, crtx.TransferRequest{Recipient: d.Recipient, Amount: d.Amount,
					SPLToken: d.Mint, References: []string{d.Reference}, Memo: d.Memo})
				if err != nil && ctx.Err() != nil {
					// Interrupted while paying: the transfer may have left.
					fmt.Fprintf(c.errOut, "crtx: stopped while paying deposit %s: see whether the payment arrived with 'crtx deposits list'; if not, pay it from any wallet with its URL above\n", d.DepositID)
					return err
				}
				if err != nil {
					return fmt.Errorf("paying deposit %s: %w", d.DepositID, err)
				}
				fmt.Fprintf(c.out, "sent %s\n", sig)
			}
			return c.awaitDeposit(ctx, cl, d, wait)
		},
	}
	f := cmd.Flags()
	f.StringVar(&env, "environment", "", envHelp)
	f.BoolVar(&pay, "pay", false, "pay the request from the wallet key file, through --rpc")
	f.StringVar(&rpc, "rpc", os.Getenv("CRTX_SOLANA_RPC"), "Solana JSON-RPC URL that --pay sends through (CRTX_SOLANA_RPC)")
	f.DurationVar(&wait, "wait", 30*time.Minute, "how long to wait for the payment (0: do not wait)")
	return cmd
}

// awaitDeposit polls d until it is credited, printing a progress line.
func (c *cli) awaitDeposit(ctx context.Context, cl *client.Client, d api.Deposit, wait time.Duration) error {
	if wait <= 0 {
		fmt.Fprintf(c.out, "deposit %s is awaiting payment; see it with: crtx deposits list\n", d.DepositID)
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	for {
		fmt.Fprintf(c.out, "\rwaiting for the payment to be finalized: %s of %s USDC credited (%s)   ",
			d.Credited, d.Amount, time.Since(start).Round(time.Second))
		if d.Status == crtx.DepositCredited {
			fmt.Fprintf(c.out, "\ncredited %s USDC to %s\n", d.Credited, d.Environment)
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(c.out)
			later := fmt.Sprintf("deposit %s is not credited yet (%s); a payment made later is still credited: pay it from any wallet with its URL,\n  %s\nand follow it with: crtx deposits list", d.DepositID, d.Status, d.SolanaPayURL)
			if parent.Err() != nil {
				// Interrupted: the error is not printed, this is.
				fmt.Fprintf(c.errOut, "crtx: stopped waiting; %s\n", later)
				return parent.Err()
			}
			return errors.New(later)
		case <-time.After(2 * time.Second):
		}
		next, err := cl.GetDeposit(ctx, d.DepositID)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return err
		}
		d = next
	}
}

func (c *cli) withdrawCmd() *cobra.Command {
	var env string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "withdraw AMOUNT",
		Short: "Pay USDC from the wallet's balance to the wallet's own token account on Solana",
		Long: `withdraw takes AMOUNT from the wallet's available balance and pays it to the wallet's
own USDC token account on the chain (created if missing; the marketplace pays the
fees). The money goes nowhere else. It waits until the transfer is finalized.`,
		Example: "  crtx withdraw 10",
		Args:    cmdline.Args("AMOUNT"),
		RunE: func(cmd *cobra.Command, a []string) error {
			ctx := cmd.Context()
			amount, err := crtx.ParseUSDC(a[0])
			if err != nil {
				return err
			}
			cl, e, err := c.listClient(ctx, env)
			if err != nil {
				return err
			}
			w, err := cl.NewWithdrawal(ctx, e, amount)
			if err != nil {
				return err
			}
			if c.json || wait <= 0 {
				return c.print(w, "withdrawal %s of %s USDC to %s is %s\n", w.WithdrawalID, w.Amount, w.Destination, w.Status)
			}
			fmt.Fprintf(c.out, "withdrawing %s USDC to %s (withdrawal %s)\n", w.Amount, w.Destination, w.WithdrawalID)
			ctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			for !w.Status.Final() {
				select {
				case <-ctx.Done():
					return fmt.Errorf("withdrawal %s is still %s; it goes on without this command: crtx withdrawals list", w.WithdrawalID, w.Status)
				case <-time.After(time.Second):
				}
				if w, err = cl.GetWithdrawal(ctx, w.WithdrawalID); err != nil && ctx.Err() == nil {
					return err
				}
			}
			if w.Status == crtx.WithdrawalFailed {
				return fmt.Errorf("withdrawal %s failed and was refunded to the balance: %s", w.WithdrawalID, deref(w.Reason))
			}
			fmt.Fprintf(c.out, "confirmed: %s\n", deref(w.ExplorerURL))
			return nil
		},
	}
	cmd.Flags().StringVar(&env, "environment", "", envHelp)
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "how long to wait for the transfer to be finalized (0: do not wait)")
	return cmd
}

func (c *cli) depositsCmd() *cobra.Command {
	var env string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the wallet's deposits, newest first",
		Args:  cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, e, err := c.listClient(cmd.Context(), env)
			if err != nil {
				return err
			}
			p, err := cl.Deposits(cmd.Context(), e, 100, 0)
			if err != nil {
				return err
			}
			var rows [][]any
			for _, d := range p.Deposits {
				rows = append(rows, []any{d.DepositID, d.Amount, d.Credited, d.Status, d.CreatedAt.Format(time.DateTime)})
			}
			return c.print(p, "%s", table("DEPOSIT\tASKED (USDC)\tCREDITED (USDC)\tSTATUS\tCREATED", rows))
		},
	}
	list.Flags().StringVar(&env, "environment", "", envHelp)
	return listGroup(&cobra.Command{Use: "deposits", Short: "List deposits from Solana (deposits alone lists them)"}, list)
}

func (c *cli) withdrawalsCmd() *cobra.Command {
	var env string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the wallet's withdrawals, newest first",
		Args:  cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, e, err := c.listClient(cmd.Context(), env)
			if err != nil {
				return err
			}
			p, err := cl.Withdrawals(cmd.Context(), e, 100, 0)
			if err != nil {
				return err
			}
			var rows [][]any
			for _, w := range p.Withdrawals {
				rows = append(rows, []any{w.WithdrawalID, w.Amount, w.Status, deref(w.Signature), w.CreatedAt.Format(time.DateTime)})
			}
			return c.print(p, "%s", table("WITHDRAWAL\tUSDC\tSTATUS\tSIGNATURE\tCREATED", rows))
		},
	}
	list.Flags().StringVar(&env, "environment", "", envHelp)
	return listGroup(&cobra.Command{Use: "withdrawals", Short: "List withdrawals to Solana (withdrawals alone lists them)"}, list)
}

// listGroup is a group whose list command also runs when the group is
// named alone ("crtx deposits"), with its flags.
func listGroup(group, list *cobra.Command) *cobra.Command {
	g := cmdline.Group(group, list)
	g.Flags().AddFlagSet(list.Flags())
	unknown := g.RunE
	g.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return list.RunE(cmd, args)
		}
		return unknown(cmd, args)
	}
	return g
}

// envHelp says how the money commands pick their environment.
const envHelp = "mainnet or devnet (default: your API key's, else mainnet)"

// listClient signs in with the wallet key file, for env: the flag's, else
// the API key's, as the figures of every other command are.
func (c *cli) listClient(ctx context.Context, env string) (*client.Client, crtx.Environment, error) {
	e, err := crtx.ParseEnvironment("--environment", string(c.environment(env)))
	if err != nil {
		return nil, "", err
	}
	c.env = e
	cl, err := c.session(ctx)
	return cl, e, err
}
