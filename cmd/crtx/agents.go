package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

func (c *cli) agentsList(ctx context.Context, args []string) error {
	fs := c.flags("agents list")
	q := url.Values{}
	for _, f := range []string{"tags", "q", "sort", "min-success-rate", "min-executions", "environment", "limit", "offset"} {
		fs.Func(f, "the "+strings.ReplaceAll(f, "-", "_")+" parameter", func(v string) error {
			q.Set(strings.ReplaceAll(f, "-", "_"), v)
			return nil
		})
	}
	verified := fs.Bool("verified-only", false, "only agents of verified creators")
	if _, err := c.positional(fs, args, 0); err != nil {
		return err
	}
	if *verified {
		q.Set("verified_only", "true")
	}
	page, err := c.api("").Agents(ctx, q)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, a := range page.Agents {
		badge := ""
		if a.Creator.Verified {
			badge = " ✓"
		}
		fmt.Fprintf(&b, "%s  %-28s %8s USDC  %5d runs  %3.0f%% ok  %5d ms  %s%s\n", a.AgentID, a.Name, a.Price,
			a.TotalExecutions, a.SuccessRate*100, a.AvgExecutionTimeMS, strings.Join(a.Tags, ","), badge)
	}
	fmt.Fprintf(&b, "%d of %d agents\n", len(page.Agents), page.Total)
	return c.print(page, "%s", b.String())
}

func (c *cli) agentsShow(ctx context.Context, args []string) error {
	fs := c.flags("agents show")
	env := fs.String("environment", "", "whose statistics: mainnet or devnet")
	pos, err := c.positional(fs, args, 1)
	if err != nil {
		return err
	}
	a, err := c.api("").Agent(ctx, pos[0], envOf(*env))
	if err != nil {
		return err
	}
	return c.print(a, "%s — %s\n%s\n\nprice        %s USDC a call (%s)\nstatus       %s\ncreator      %s (%s)%s\ntags         %s\n"+
		"statistics   %d runs, %d completed, %s success, %d ms average, %d disputes (%s)\ntimeout      %d s\n"+
		"input        %s\noutput       %s\nledger       %s\n",
		a.Name, a.Tagline, a.Description, a.Price, a.PricingModel, a.Status, a.Creator.DisplayName, a.Creator.Pubkey,
		map[bool]string{true: " ✓ verified", false: ""}[a.Creator.Verified], strings.Join(a.Tags, ", "),
		a.TotalExecutions, a.SuccessfulExecutions, strconv.FormatFloat(a.SuccessRate*100, 'f', 1, 64)+"%",
		a.AvgExecutionTimeMS, a.DisputeCount, a.Environment, a.TimeoutSeconds, a.InputSchema, a.OutputSchema, a.OnChainListing)
}
