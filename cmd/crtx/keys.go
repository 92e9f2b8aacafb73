package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
)

func (c *cli) keysCmd() *cobra.Command {
	var limit string
	create := &cobra.Command{
		Use:   "create NAME ENVIRONMENT",
		Short: "Create an API key for devnet (crtx_test_…) or mainnet (crtx_live_…); it is shown once",
		Example: `  crtx keys create laptop devnet
  crtx keys create ci mainnet --spend-limit 25`,
		Args: cmdline.Args("NAME", "ENVIRONMENT"),
		RunE: func(cmd *cobra.Command, a []string) error {
			env, err := crtx.ParseEnvironment("ENVIRONMENT", a[1])
			if err != nil {
				return err
			}
			p := client.KeyParams{Name: a[0], Environment: env}
			if limit != "" {
				l, err := crtx.ParseUSDC(limit)
				if err != nil {
					return err
				}
				p.SpendLimit = &l
			}
			cl, err := c.session(cmd.Context())
			if err != nil {
				return err
			}
			k, err := cl.CreateKey(cmd.Context(), p)
			if err != nil {
				return err
			}
			return c.print(k, "%s\n(shown only now; keep it in a secrets store, or run: crtx login --api-key KEY)\n", k.Key)
		},
	}
	create.Flags().StringVar(&limit, "spend-limit", "", "the most the key may spend in all, in USDC (no limit when not given)")
	return cmdline.Group(&cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke API keys",
	}, create, &cobra.Command{
		Use:   "list",
		Short: "List your API keys",
		Args:  cmdline.Args(),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, _ []string) error {
			keys, err := cl.Keys(ctx)
			if err != nil {
				return err
			}
			rows := make([][]any, len(keys))
			for i, k := range keys {
				state := "active"
				if k.RevokedAt != nil {
					state = "revoked"
				}
				rows[i] = []any{k.ID, k.Environment, k.Prefix + "…", state, k.ExecutionCount, k.TotalSpent, k.Name}
			}
			return c.print(api.KeyList{Keys: keys}, "%s", table("ID\tENVIRONMENT\tKEY\tSTATE\tCALLS\tSPENT (USDC)\tNAME", rows))
		}),
	}, &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key at once",
		Args:  cmdline.Args("ID"),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, a []string) error {
			k, err := cl.RevokeKey(ctx, a[0])
			if err != nil {
				return err
			}
			return c.print(k, "revoked %s\n", k.ID)
		}),
	})
}
