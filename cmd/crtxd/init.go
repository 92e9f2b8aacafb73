package main

import (
	"crypto/ed25519"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/daemon"
	"github.com/spf13/cobra"
)

func initCommand() *cobra.Command {
	cfg := daemon.Defaults()
	var next bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Make a new marketplace's keys in --data, once",
		Long: `Make a new marketplace's two keys in --data: authority.json, which signs the ledger's
blocks, and marketplace.json, which signs requests to creators. A first crtxd serve makes them
too; init is for a --data that crtxd serve may not write (a read-only folder under systemd).
It never replaces a key: a folder that holds either is refused. Copy both, mode 0600, to every
replica of the marketplace, and keep a copy apart from the database's backups.

With --next it makes the key that will sign requests after a rotation of the marketplace key,
marketplace.next.json, beside the marketplace's (docs/deploy.md, "Rotating secrets").`,
		Example: `  crtxd init --data /etc/crtx
  crtxd init --next --data /etc/crtx`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if next {
				pub, err := daemon.InitNextKey(cfg.Data)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "next marketplace signer  %s  %s/marketplace.next.json\n", crtx.Address(pub), cfg.Data)
				return nil
			}
			keys, err := daemon.InitKeys(cfg.Data)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ledger authority    %s  %s/authority.json\nmarketplace signer  %s  %s/marketplace.json\n",
				crtx.Address(keys.Authority.Public().(ed25519.PublicKey)), cfg.Data, crtx.Address(keys.Signer.Public().(ed25519.PublicKey)), cfg.Data)
			return nil
		},
	}
	cmd.Flags().StringVar(&cfg.Data, "data", cfg.Data, "directory for the keys (and the SQLite file, crtx.db)")
	cmd.Flags().BoolVar(&next, "next", false, "make the next marketplace key of a rotation, beside the marketplace's")
	return cmd
}
