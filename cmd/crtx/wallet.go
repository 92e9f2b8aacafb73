package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/keyfile"
)

func (c *cli) walletCmd() *cobra.Command {
	return cmdline.Group(&cobra.Command{
		Use:   "wallet",
		Short: "Create, import or show your wallet key file",
	}, &cobra.Command{
		Use:   "new",
		Short: "Create a wallet key file (Solana CLI format, mode 0600) at --keypair",
		Args:  cmdline.Args(),
		RunE: func(*cobra.Command, []string) error {
			_, key, err := ed25519.GenerateKey(nil)
			if err != nil {
				return err
			}
			return c.writeWallet(key, "written to")
		},
	}, &cobra.Command{
		Use:     "import FILE",
		Short:   "Copy a Solana CLI key file to --keypair",
		Example: "  crtx wallet import ~/.config/solana/id.json",
		Args:    cmdline.Args("FILE"),
		RunE: func(_ *cobra.Command, a []string) error {
			key, err := keyfile.Load(a[0])
			if err != nil {
				return err
			}
			return c.writeWallet(key, "imported to")
		},
	}, &cobra.Command{
		Use:   "show",
		Short: "Print the wallet's address",
		Args:  cmdline.Args(),
		RunE: func(*cobra.Command, []string) error {
			_, addr, err := c.wallet()
			if err != nil {
				return err
			}
			return c.print(map[string]string{"wallet": addr, "keypair": c.keypair}, "%s\n", addr)
		},
	})
}

// writeWallet writes key to the key file, refusing to replace one.
func (c *cli) writeWallet(key ed25519.PrivateKey, done string) error {
	if err := keyfile.Write(c.keypair, key); errors.Is(err, fs.ErrExist) {
		if _, addr, err := c.wallet(); err == nil {
			return fmt.Errorf("%s already holds wallet %s; it is kept (give --keypair FILE to write another)", c.keypair, addr)
		}
		return fmt.Errorf("%s already exists; it is kept (give --keypair FILE to write another)", c.keypair)
	} else if err != nil {
		return err
	}
	addr := crtx.Address(key.Public().(ed25519.PublicKey))
	return c.print(map[string]string{"wallet": addr, "keypair": c.keypair}, "wallet %s %s %s\n", addr, done, c.keypair)
}

func (c *cli) balanceCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "balance",
		Short: "Show the wallet's balances (with only an API key: that key's wallet and environment)",
		Long: `balance shows, with an API key, that key's wallet in that key's environment; else it
signs in with the wallet key file and shows every environment. A key file given by
--keypair or CRTX_KEYPAIR wins over the API key of the profile.`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cl *client.Client
			var err error
			// A key file given on the command line wins over the profile's key.
			if c.apiKey != "" && (c.apiKeyGiven || !c.keypairGiven) {
				cl, _ = c.key()
			} else if cl, err = c.session(cmd.Context()); err != nil {
				return err
			}
			w, err := cl.Wallet(cmd.Context())
			if err != nil {
				return err
			}
			var rows [][]any
			for _, env := range crtx.Environments {
				if b, ok := w.Balances[env]; ok {
					rows = append(rows, []any{env, b.Available, b.Escrowed})
				}
			}
			return c.print(w, "%s", table("ENVIRONMENT\tAVAILABLE (USDC)\tIN ESCROW (USDC)", rows))
		},
	}
}

func (c *cli) airdropCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "airdrop AMOUNT",
		Short:   "Get devnet USDC for the wallet (free, limited per hour); on a local chain, in its token account there",
		Example: "  crtx airdrop 50",
		Args:    cmdline.Args("AMOUNT"),
		RunE: func(cmd *cobra.Command, a []string) error {
			amount, err := crtx.ParseUSDC(a[0])
			if err != nil {
				return err
			}
			_, addr, err := c.wallet()
			if err != nil {
				return err
			}
			f, err := c.api("").Airdrop(cmd.Context(), addr, amount)
			if err != nil {
				return err
			}
			if f.Kind == api.KindFaucet {
				sol := ""
				if f.SOLLamports > 0 {
					sol = fmt.Sprintf(", and %g SOL for its fees", float64(f.SOLLamports)/1e9)
				}
				return c.print(f, "sent %s test USDC to %s's token account %s on the local chain (transaction %s)%s: "+
					"pay with it by x402 (crtx run --x402) or a deposit (crtx deposit --pay)\n", f.Amount, addr, f.TokenAccount, f.TransactionID, sol)
			}
			return c.print(f, "airdropped %s USDC on devnet; available %s USDC\n", f.Amount, f.Balance.Available)
		},
	}
}
