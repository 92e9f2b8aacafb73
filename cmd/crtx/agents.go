package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/spf13/cobra"
)

func (c *cli) agentsCmd() *cobra.Command {
	var env string
	var verified bool
	// catalogFlags are the filters of GET /v1/agents, each with the values it takes.
	catalogFlags := []struct{ name, usage string }{
		{"q", "search text, matched against names, taglines, descriptions and tags"},
		{"tags", "only agents with all of these tags, comma-separated (e.g. data,pdf)"},
		{"sort", "order: total_executions, success_rate, price_asc, price_desc, created_at or relevance (the default with --q)"},
		{"min-success-rate", "only agents at or above this success rate, 0 to 1 (e.g. 0.95)"},
		{"min-executions", "only agents with at least this many runs"},
		{"limit", "agents a page, 1 to 100 (default 20)"},
		{"offset", "agents to skip, for the next page"},
	}

	q := url.Values{}
	var quiet bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Browse the catalog, with statistics of your key's environment",
		Example: `  crtx agents list --tags data --sort success_rate
  crtx agents list --q "invoice totals" --min-success-rate 0.9
  AGENT_ID=$(crtx agents list --tags writing --ids | head -n1)`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			e := c.environment(env)
			q.Set("environment", string(e))
			if verified {
				q.Set("verified_only", "true")
			}
			page, err := c.api("").Agents(cmd.Context(), q)
			if err != nil {
				return err
			}
			if quiet {
				ids := make([]string, len(page.Agents))
				for i, a := range page.Agents {
					ids[i] = a.AgentID
				}
				return c.printIDs(page, ids)
			}
			rows := make([][]any, len(page.Agents))
			for i, a := range page.Agents {
				badge := ""
				if a.Creator.Verified {
					badge = "✓"
				}
				rows[i] = []any{a.AgentID, a.Name, crtx.DefaultDisplayName(a.Creator.Pubkey), a.Price, a.TotalExecutions, ranStat(a.TotalExecutions, fmt.Sprintf("%.0f%%", a.SuccessRate*100)),
					ranStat(a.TotalExecutions, strconv.FormatInt(a.AvgExecutionTimeMS, 10)), strings.Join(a.Tags, ","), badge}
			}
			return c.print(page, "%s%d of %d agents; statistics on %s\n",
				table("ID\tNAME\tCREATOR\tPRICE (USDC)\tRUNS\tSUCCESS\tAVG MS\tTAGS\tVERIFIED", rows), len(page.Agents), page.Total, e)
		},
	}
	for _, f := range catalogFlags {
		list.Flags().Func(f.name, f.usage, func(v string) error {
			q.Set(strings.ReplaceAll(f.name, "-", "_"), v)
			return nil
		})
	}
	list.Flags().BoolVar(&verified, "verified-only", false, "only agents of verified creators")
	list.Flags().BoolVar(&quiet, "ids", false, "print only the agents' ids, one a line, for a shell to capture")
	list.Flags().StringVar(&env, "environment", "", "whose statistics: mainnet or devnet (default: your API key's)")

	show := &cobra.Command{
		Use:   "show AGENT_ID",
		Short: "Show an agent's listing, schemas, statistics, and how to reach it over MCP and A2A",
		Args:  cmdline.Args("AGENT_ID"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := c.api("").Agent(cmd.Context(), a[0], c.environment(env))
			if err != nil {
				return err
			}
			verified := ""
			if l.Creator.Verified {
				verified = " ✓ verified"
			}
			// How to reach it from MCP and A2A, with a key of the environment
			// shown; --json stays the listing as the API sent it.
			key := crtx.LiveKeyPrefix + "…"
			if l.Environment == crtx.Devnet {
				key = crtx.TestKeyPrefix + "…"
			}
			price := l.Price.String() + " USDC a call"
			if m, ok := l.Metered(); ok {
				price = m.String()
			}
			return c.print(l, "%s — %s\n%s\n\nprice        %s (%s)\nstatus       %s\ncreator      %s (%s)%s\ntags         %s\n"+
				"statistics   %d runs, %d completed, %s success, %s ms average, %d disputes (%s)\ntimeout      %d s\n"+
				"input        %s\noutput       %s\nledger       %s\n"+
				"mcp          %s — call the tool run_agent with agent_id %s\n             %s\n             %s\n"+
				"a2a card     %s\n",
				l.Name, l.Tagline, l.Description, price, l.PricingModel, l.Status, l.Creator.DisplayName, l.Creator.Pubkey,
				verified, strings.Join(l.Tags, ", "),
				l.TotalExecutions, l.SuccessfulExecutions, ranStat(l.TotalExecutions, strconv.FormatFloat(l.SuccessRate*100, 'f', 1, 64)+"%"),
				ranStat(l.TotalExecutions, strconv.FormatInt(l.AvgExecutionTimeMS, 10)), l.DisputeCount, l.Environment, l.TimeoutSeconds, l.InputSchema, l.OutputSchema, l.OnChainListing,
				api.MCPURL(c.url), l.AgentID, api.ClaudeMCPAdd(c.url, key), api.MCPServers(c.url, key, ""), api.CardURL(c.url, l.AgentID))
		},
	}
	show.Flags().StringVar(&env, "environment", "", "whose statistics: mainnet or devnet (default: your API key's)")
	return cmdline.Group(&cobra.Command{Use: "agents", Short: "Browse the catalog and read agents' listings"}, list, show)
}

// ranStat is a statistic of an agent's runs, or "—" for an agent that never
// ran: a success rate of 0% would say it failed every time.
func ranStat[N int | int64](runs N, stat string) string {
	if runs == 0 {
		return "—"
	}
	return stat
}
