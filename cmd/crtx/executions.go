package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
)

func (c *cli) executionsCmd() *cobra.Command {
	q := url.Values{}
	var quiet bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List your API key's executions, newest first",
		Example: `  crtx executions list --status completed --from 2026-11-01T00:00:00Z
  crtx verify "$(crtx executions list --ids | head -n1)"`,
		Args: cmdline.Args(),
		RunE: c.withKey(func(ctx context.Context, cl *client.Client, _ []string) error {
			page, err := cl.Executions(ctx, q)
			if err != nil {
				return err
			}
			if quiet {
				ids := make([]string, len(page.Executions))
				for i, e := range page.Executions {
					ids[i] = e.ExecutionID
				}
				return c.printIDs(page, ids)
			}
			rows := make([][]any, len(page.Executions))
			for i, e := range page.Executions {
				rows[i] = []any{e.ExecutionID, e.Status, e.Cost, e.InitiatedAt.Format(time.RFC3339), e.AgentName}
			}
			return c.print(page, "%s%d of %d executions\n", table("ID\tSTATUS\tCOST (USDC)\tSTARTED\tAGENT", rows), len(page.Executions), page.Total)
		}),
	}
	for _, f := range []struct{ flag, param, usage string }{
		{"status", "status", "only executions in this state: pending, running, completed, failed or disputed"},
		{"agent", "agent_id", "only executions of this agent"},
		{"from", "from", "only executions started at or after this time (RFC 3339)"},
		{"to", "to", "only executions started before this time (RFC 3339)"},
		{"limit", "limit", "executions a page, 1 to 100 (default 20)"},
		{"offset", "offset", "executions to skip, for the next page"},
	} {
		list.Flags().Func(f.flag, f.usage, func(v string) error { q.Set(f.param, v); return nil })
	}
	list.Flags().BoolVar(&quiet, "ids", false, "print only the executions' ids, one a line, for a shell to capture")
	return cmdline.Group(&cobra.Command{Use: "executions", Short: "List, show and follow your executions"}, list, &cobra.Command{
		Use:   "show ID",
		Short: "Show an execution: status, cost, result and ledger record",
		Args:  cmdline.Args("ID"),
		RunE: c.withKey(func(ctx context.Context, cl *client.Client, a []string) error {
			rec, err := cl.Execution(ctx, a[0])
			if err != nil {
				return err
			}
			return c.print(rec, "%s", describe(rec))
		}),
	}, &cobra.Command{
		Use:   "watch ID",
		Short: "Follow an execution until it ends, printing each status",
		Args:  cmdline.Args("ID"),
		RunE: c.withKey(func(ctx context.Context, cl *client.Client, a []string) error {
			last := crtx.ExecStatus("")
			rec, err := c.follow(ctx, cl, a[0], func(s crtx.ExecStatus) {
				if s != last && !c.json {
					fmt.Fprintf(c.out, "%s %s\n", time.Now().Format("15:04:05"), s)
					last = s
				}
			})
			if err != nil {
				if ctx.Err() != nil {
					c.interrupted(a[0], "")
				}
				return err
			}
			if !c.json {
				fmt.Fprintf(c.out, "%s %s\n\n", time.Now().Format("15:04:05"), rec.Status)
			}
			return c.print(rec, "%s", describe(rec))
		}),
	})
}

func describe(r api.ExecutionRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "execution  %s\nagent      %s (%s)\nstatus     %s\ncost       %s USDC (creator %s, platform %s)\n",
		r.ExecutionID, r.AgentName, r.AgentID, r.Status, r.Cost, r.CreatorAmount, r.PlatformAmount)
	if r.Error != nil {
		fmt.Fprintf(&b, "error      %s: %s\n", r.Error.Code, r.Error.Message)
	}
	if r.ResultHash != nil {
		where := "private (not published)"
		if r.IPFSURL != nil {
			where = *r.IPFSURL
		}
		fmt.Fprintf(&b, "hash       %s\nresult     %s\n", *r.ResultHash, where)
	}
	if r.Dispute != nil {
		fmt.Fprintf(&b, "dispute    %s %s\n", r.Dispute.DisputeID, r.Dispute.Status)
	}
	fmt.Fprintf(&b, "ledger     %s\n", r.OnChainRecord)
	if r.Result != nil {
		fmt.Fprintf(&b, "\n%s\n", *r.Result)
	}
	return b.String()
}

func (c *cli) verifyCmd() *cobra.Command {
	var rpc string
	var requireAnchor bool
	cmd := &cobra.Command{
		Use:   "verify EXECUTION_ID",
		Short: "Check an execution's result hash, creator signature, ledger record, block proof and Solana anchor",
		Long: `verify checks an execution from public data alone: the published result against
its SHA-256 hash and content id, the creator's Ed25519 signature against the key of the
agent's listing, the ledger transaction that records it, the Merkle proof of that
transaction to a block signed by the marketplace, and then the hash chain from that block
to the first block anchored on Solana, whose memo transaction is read from the cluster
(--rpc or CRTX_SOLANA_RPC; by default the public endpoint of the anchor's cluster, and a
local validator needs it) and must be signed by the ledger authority. A block with no
anchored block after it yet is reported as not anchored yet, and an anchor on a cluster
it has no RPC URL for as not checked: neither is a failure, unless --require-anchor. It
exits 1 if any check fails.`,
		Example: `  crtx verify 0192f3a1-7c2e-7d4b-9a41-5be7c0d3f8a2
  crtx verify 0192f3a1-7c2e-7d4b-9a41-5be7c0d3f8a2 --rpc http://127.0.0.1:8899`,
		Args: cmdline.Args("EXECUTION_ID"),
		RunE: c.withKey(func(ctx context.Context, cl *client.Client, a []string) error {
			if u := firstOf(rpc, os.Getenv("CRTX_SOLANA_RPC")); u != "" {
				cl = cl.WithSolanaRPC(u)
			}
			rep, err := cl.Verify(ctx, a[0])
			if err != nil {
				return err
			}
			c.last = nil // the report is this command's own
			text := ""
			for _, ch := range rep.Checks {
				mark := "ok    "
				if !ch.OK {
					mark = "FAILED"
				}
				text += fmt.Sprintf("%s %-18s %s\n", mark, ch.Name, ch.Detail)
			}
			switch rep.Anchor {
			case client.NotAnchoredYet:
				text += fmt.Sprintf("%-6s %-18s %s\n", "-", "anchor", "not anchored yet: "+rep.AnchorDetail)
			case client.AnchorNotChecked:
				text += fmt.Sprintf("%-6s %-18s %s\n", "-", "anchor", "not checked: "+rep.AnchorDetail)
			}
			if err := c.print(rep, "%s", text); err != nil {
				return err
			}
			if !rep.OK() {
				return errors.New("verification failed")
			}
			if requireAnchor && rep.Anchor != client.Anchored {
				return fmt.Errorf("the anchor was required and is %s", rep.Anchor)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&rpc, "rpc", "", "the Solana JSON-RPC URL to read the anchor from (default: $CRTX_SOLANA_RPC, else the public endpoint of the anchor's cluster)")
	cmd.Flags().BoolVar(&requireAnchor, "require-anchor", false, "exit 1 unless the anchor on Solana was found and checked")
	return cmd
}

func (c *cli) disputeCmd() *cobra.Command {
	var reason, desc, evidence string
	cmd := &cobra.Command{
		Use:     "dispute EXECUTION_ID",
		Short:   "Open a dispute over an execution; upheld, it refunds you from the creator's collateral",
		Example: `  crtx dispute EXECUTION_ID --reason hash_mismatch --description "the result does not match its hash"`,
		Args:    cmdline.Args("EXECUTION_ID"),
		RunE: c.withKey(func(ctx context.Context, cl *client.Client, a []string) error {
			body := map[string]any{"reason": reason, "description": desc}
			if evidence != "" {
				b, err := os.ReadFile(evidence)
				if err != nil {
					return err
				}
				body["evidence"] = json.RawMessage(b)
			}
			raw, _ := json.Marshal(body)
			var d api.DisputeInfo
			if err := cl.Do(ctx, "POST", "/v1/executions/"+url.PathEscape(a[0])+"/disputes", "application/json", raw, &d); err != nil {
				return err
			}
			return c.print(d, "dispute %s opened; the creator is to respond by %s\n", d.DisputeID, d.RespondBy.Format(time.RFC3339))
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why: hash_mismatch, fraud or other")
	cmd.Flags().StringVar(&desc, "description", "", "what went wrong, in your words")
	cmd.Flags().StringVar(&evidence, "evidence-file", "", "a file holding a JSON object of evidence")
	cmd.MarkFlagRequired("reason")
	cmd.MarkFlagRequired("description")
	return cmd
}
