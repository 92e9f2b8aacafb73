package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/daemon"
)

const adminUsage = `usage:
  crtxd admin disputes list [--status open|upheld|rejected]
  crtxd admin disputes resolve DISPUTE_ID --outcome upheld|rejected [--slash USDC] [--refund USDC]
  crtxd admin creators verify|unverify WALLET
  crtxd admin agents suspend|unsuspend AGENT_ID
  crtxd admin collateral release
`

// admin runs the operator's commands against the store directly; they take
// the same --data and --db as every crtxd command.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("missing command")
	}
	cmd := args[0] + " " + args[1]
	cfg := daemon.Defaults()
	fs := newFlags("admin "+cmd, &cfg, stderr)
	status := fs.String("status", "", "disputes list: only this status")
	outcome := fs.String("outcome", "", "disputes resolve: upheld or rejected")
	slash := fs.String("slash", "", "disputes resolve: USDC to slash from the collateral")
	refund := fs.String("refund", "", "disputes resolve: USDC of the slash refunded to the caller")
	pos, err := parseInterleaved(fs, args[2:])
	if err != nil {
		return flagErr(err)
	}
	m, store, err := daemon.OpenExisting(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	out := json.NewEncoder(stdout)
	out.SetIndent("", "  ")
	one := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("%s takes one argument\n%s", cmd, adminUsage)
		}
		return pos[0], nil
	}
	amount := func(s string) (*crtx.USDC, error) {
		if s == "" {
			return nil, nil
		}
		v, err := crtx.ParseUSDC(s)
		return &v, err
	}
	switch cmd {
	case "disputes list":
		ds, err := m.Disputes(ctx, crtx.DisputeQuery{Status: *status, Limit: 1000})
		if err != nil {
			return err
		}
		for _, d := range ds {
			fmt.Fprintf(stdout, "%s  %-8s %-13s %s  respond by %s  execution %s\n", d.ID, d.Status, d.Reason, d.Environment,
				d.RespondBy.Format("2006-01-02 15:04Z"), d.ExecutionID)
		}
		return nil
	case "disputes resolve":
		id, err := one()
		if err != nil {
			return err
		}
		p := crtx.ResolveParams{Outcome: *outcome}
		if p.Slash, err = amount(*slash); err != nil {
			return fmt.Errorf("--slash: %w", err)
		}
		if p.Refund, err = amount(*refund); err != nil {
			return fmt.Errorf("--refund: %w", err)
		}
		d, err := m.ResolveDispute(ctx, id, p)
		if err != nil {
			return err
		}
		return out.Encode(api.NewDisputeInfo(d))
	case "creators verify", "creators unverify":
		w, err := one()
		if err != nil {
			return err
		}
		p, err := m.SetVerified(ctx, w, args[1] == "verify")
		if err != nil {
			return err
		}
		return out.Encode(p)
	case "agents suspend", "agents unsuspend":
		id, err := one()
		if err != nil {
			return err
		}
		a, err := m.Suspend(ctx, id, args[1] == "suspend")
		if err != nil {
			return err
		}
		return out.Encode(a)
	case "collateral release":
		n, err := m.ReleaseCollateral(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "released the collateral of %d listings\n", n)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, adminUsage)
}

// parseInterleaved parses flags that may follow positional arguments.
func parseInterleaved(fs interface {
	Parse([]string) error
	NArg() int
	Arg(int) string
	Args() []string
}, args []string) ([]string, error) {
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
