package main

import (
	"context"
	"crypto/ed25519"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/keyfile"
)

func (c *cli) creatorCmd() *cobra.Command {
	return cmdline.Group(&cobra.Command{
		Use:   "creator",
		Short: "List agents, manage your listings and read your earnings",
		Long: `creator commands act as the creator signed in with your wallet key file. A listing
locks collateral from the wallet's mainnet balance; docs/creators.md explains the
protocol your agent's POST /execute speaks.`,
	}, c.creatorKeygenCmd(), c.creatorTestCmd(), c.creatorTemplateCmd(), c.listingCmd("create"), c.listingCmd("update"),
		c.creatorStatusCmd("pause", crtx.AgentPaused), c.creatorStatusCmd("resume", crtx.AgentActive),
		c.creatorDelistCmd(), c.creatorListCmd(), c.creatorEarningsCmd())
}

func (c *cli) creatorKeygenCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Create a signing key for an agent; results are signed with it",
		Args:  cmdline.Args(),
		RunE: func(*cobra.Command, []string) error {
			_, key, err := ed25519.GenerateKey(nil)
			if err != nil {
				return err
			}
			if err := keyfile.Write(out, key); errors.Is(err, fs.ErrExist) {
				if kept, err := keyfile.Load(out); err == nil {
					return fmt.Errorf("%s already holds the signing key %s; it is kept (give --out FILE to write another)",
						out, crtx.Address(kept.Public().(ed25519.PublicKey)))
				}
				return fmt.Errorf("%s already exists; it is kept (give --out FILE to write another)", out)
			} else if err != nil {
				return err
			}
			pub := crtx.Address(key.Public().(ed25519.PublicKey))
			return c.print(map[string]string{"signing_public_key": pub, "file": out},
				"signing key written to %s\nsigning_public_key: %s\n", out, pub)
		},
	}
	cmd.Flags().StringVar(&out, "out", "agent-key.json", "where to write the signing key (mode 0600; an existing file is kept)")
	return cmd
}

// listingFile reads a listing's details from a JSON file of the REST body's shape.
func listingFile(path string) (crtx.ListingParams, error) {
	var p crtx.ListingParams
	b, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// listingTemplate is the smallest listing 'crtx creator create' takes: every
// field it requires, with values to replace (the signing key comes from
// --key).
//
//go:embed listing-template.json
var listingTemplate string

func (c *cli) creatorTemplateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "template",
		Short: "Print a minimal listing.json to fill in for 'crtx creator create'",
		Long: `template prints the smallest listing 'crtx creator create --file' takes: every required
field, with values to replace. The signing key is left out: --key fills it in.
docs/creators.md explains each field.`,
		Example: "  crtx creator template > listing.json",
		Args:    cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(c.out, listingTemplate)
			return err
		},
	}
}

// samplePublicKey stands in the example listings for the agent's signing
// key, which the creator's copy replaces.
const samplePublicKey = "YOUR_SIGNING_PUBLIC_KEY"

// listingCmd is "creator create" (a new listing) or "creator update"
// (changes to one): both send a JSON file of the REST body's shape.
func (c *cli) listingCmd(verb string) *cobra.Command {
	var file, keyFile string
	cmd := &cobra.Command{
		Use:     "create",
		Short:   "List an agent from a JSON file; locks collateral from your mainnet balance",
		Example: "  crtx creator create --file examples/textstats/listing.json --key agent-key.json",
		Args:    cmdline.Args(),
	}
	usage := "the listing as JSON: the body of POST /v1/creator/agents"
	if verb == "update" {
		cmd.Use, cmd.Short, cmd.Args = "update AGENT_ID", "Change a listing with the fields of a JSON file", cmdline.Args("AGENT_ID")
		cmd.Example = `  echo '{"price_per_call_usdc": 0.02}' > price.json && crtx creator update AGENT_ID --file price.json`
		usage = "the changes as JSON: the body of PATCH /v1/creator/agents/{agent_id}"
	}
	cmd.RunE = func(cmd *cobra.Command, a []string) error {
		p, err := listingFile(file)
		if err != nil {
			return err
		}
		if p.SigningPublicKey != nil && *p.SigningPublicKey == samplePublicKey {
			return fmt.Errorf("%s still has the sample's signing_public_key %q: put there the public key 'crtx creator keygen' printed (crtx wallet show --keypair KEY_FILE shows it again), or remove the field and --key fills it in", file, samplePublicKey)
		}
		// The session's client holds the wallet key it signed in with and
		// signs the listing statement (creator_signature) of a new listing
		// or a new signing key itself, unless the file carries one; with
		// the agent's key file it signs it with that key too
		// (key_signature), which proves the key is the creator's to list.
		cl, err := c.session(cmd.Context())
		if err != nil {
			return err
		}
		// A new key is registered only with its own signature: say which
		// flag makes it before the marketplace's longer refusal.
		registers := verb == "create" || p.SigningPublicKey != nil
		if keyFile == "" && registers && p.KeySignature == nil {
			return fmt.Errorf("--key is required: the agent's signing key file (crtx creator keygen) signs the listing, so that only the key's holder can list it (docs/creators.md, \"The listing statement\")")
		}
		if keyFile != "" {
			key, err := keyfile.Load(keyFile)
			if err != nil {
				return err
			}
			pub := crtx.Address(key.Public().(ed25519.PublicKey))
			if p.SigningPublicKey == nil && verb == "create" {
				p.SigningPublicKey = &pub // the file may leave the key to --key
			}
			if p.SigningPublicKey == nil || *p.SigningPublicKey != pub {
				return fmt.Errorf("--key %s holds the key %s, not the listing's signing_public_key", keyFile, pub)
			}
			cl = cl.WithAgentKey(key)
		}
		if verb == "update" {
			l, err := cl.UpdateListing(cmd.Context(), a[0], p)
			if err != nil {
				return err
			}
			return c.print(l, "updated %s: %s\n", l.AgentID, l.Status)
		}
		l, err := cl.CreateListing(cmd.Context(), p)
		if err != nil {
			return err
		}
		return c.print(l, "listed %s (%s), %s USDC of collateral locked\n%s\n", l.AgentID, l.Name, l.Collateral, l.OnChainListing)
	}
	cmd.Flags().StringVar(&file, "file", "", usage)
	cmd.MarkFlagRequired("file")
	keyUsage := "the agent's signing key file (crtx creator keygen): it signs the listing as the key's holder; needed to list"
	if verb == "update" {
		keyUsage = "the new signing key's file, when the changes name a new signing_public_key"
	}
	cmd.Flags().StringVar(&keyFile, "key", "", keyUsage)
	return cmd
}

func (c *cli) creatorStatusCmd(verb string, status crtx.AgentStatus) *cobra.Command {
	short, done := "Pause a listing: it leaves the catalog and takes no executions", "paused"
	if status == crtx.AgentActive {
		short, done = "Resume a paused listing", "resumed"
	}
	return &cobra.Command{
		Use:   verb + " AGENT_ID",
		Short: short,
		Args:  cmdline.Args("AGENT_ID"),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, a []string) error {
			l, err := cl.UpdateListing(ctx, a[0], crtx.ListingParams{Status: &status})
			if err != nil {
				return err
			}
			return c.print(l, "%s %s: %s\n", done, l.AgentID, l.Status)
		}),
	}
}

func (c *cli) creatorDelistCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delist AGENT_ID",
		Short: "Delist an agent for good; its collateral returns 72 hours after its last execution",
		Args:  cmdline.Args("AGENT_ID"),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, a []string) error {
			l, err := cl.Delist(ctx, a[0])
			if err != nil {
				return err
			}
			return c.print(l, "delisted %s; its %s USDC of collateral is returned 72 hours after its last execution\n", l.AgentID, l.Collateral)
		}),
	}
}

func (c *cli) creatorListCmd() *cobra.Command {
	var ids bool
	var env string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List your agents, oldest first, with their statistics in your key's environment",
		Example: "  AGENT_ID=$(crtx creator list --ids | tail -n1)   # the newest",
		Args:    cmdline.Args(),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, _ []string) error {
			e, err := crtx.ParseEnvironment("--environment", string(c.environment(env)))
			if err != nil {
				return err
			}
			agents, err := cl.CreatorAgentsIn(ctx, e)
			if err != nil {
				return err
			}
			if ids {
				list := make([]string, len(agents))
				for i, a := range agents {
					list[i] = a.AgentID
				}
				return c.printIDs(api.CreatorAgentList{Agents: agents}, list)
			}
			rows := make([][]any, len(agents))
			for i, a := range agents {
				status := string(a.Status)
				if a.Suspended {
					status += " (suspended)"
				}
				rows[i] = []any{a.AgentID, a.Name, status, a.Price, a.Collateral, a.TotalExecutions}
			}
			return c.print(api.CreatorAgentList{Agents: agents}, "%s",
				table("ID\tNAME\tSTATUS\tPRICE (USDC)\tCOLLATERAL (USDC)\t"+strings.ToUpper(string(e))+" RUNS", rows))
		}),
	}
	cmd.Flags().BoolVar(&ids, "ids", false, "print only the agents' ids, one a line, for a shell to capture")
	cmd.Flags().StringVar(&env, "environment", "", "mainnet or devnet: whose statistics (default: your API key's, else mainnet)")
	return cmd
}

func (c *cli) creatorEarningsCmd() *cobra.Command {
	var env string
	cmd := &cobra.Command{
		Use:   "earnings",
		Short: "Show your earnings a day, in your key's environment",
		Args:  cmdline.Args(),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, _ []string) error {
			e, err := cl.CreatorEarnings(ctx, c.environment(env))
			if err != nil {
				return err
			}
			rows := make([][]any, len(e.Days))
			for i, d := range e.Days {
				rows[i] = []any{d.Date, d.Earned, d.Executions}
			}
			rows = append(rows, []any{"total", e.Total, e.Executions})
			return c.print(e, "%searnings on %s\n", table("DATE\tEARNED (USDC)\tEXECUTIONS", rows), e.Environment)
		}),
	}
	cmd.Flags().StringVar(&env, "environment", "", "mainnet or devnet (default: your API key's, else mainnet)")
	return cmd
}

// errFailed ends a command that ran but found problems; its report is printed.
var errFailed = errors.New("the endpoint did not pass")

// creatorTestCmd asks the marketplace to send a synthetic, signed request
// to the endpoint and prints what came back. It exits 0 only when the reply
// has the protocol's shape and a valid signature.
func (c *cli) creatorTestCmd() *cobra.Command {
	var endpoint, pub string
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Send your endpoint a signed test request and check its answer",
		Long: `Send your endpoint a signed test request and check its answer: reachable, in the
protocol's shape, signed by --public-key. It exits 0 only when all three hold; when a check
fails it prints the exchange, the request as sent and the answer as received.`,
		Example: "  crtx creator test --endpoint http://127.0.0.1:9000/execute --public-key KEY",
		Args:    cmdline.Args(),
		RunE: c.withSession(func(ctx context.Context, cl *client.Client, _ []string) error {
			rep, err := cl.TestExecution(ctx, endpoint, pub)
			if err != nil {
				return err
			}
			mark := func(ok bool) string {
				if ok {
					return "ok"
				}
				return "FAILED"
			}
			shape, signature := mark(rep.ShapeOK), mark(rep.SignatureOK)
			if !rep.Reachable {
				shape, signature = "not checked, there was no answer", "not checked, there was no answer"
			}
			text := fmt.Sprintf("endpoint   %s\nreachable  %s (%d ms)\nshape      %s\nsignature  %s\n",
				endpoint, mark(rep.Reachable), rep.LatencyMS, shape, signature)
			if rep.Status != "" {
				text += "status     " + rep.Status + "\n"
			}
			for _, p := range rep.Problems {
				text += "problem    " + p + "\n"
			}
			passed := rep.Reachable && rep.ShapeOK && rep.SignatureOK
			if ex := rep.Exchange; ex != nil && !passed {
				// What went over the wire is what a creator debugs from.
				answer := ex.Response
				if answer == "" {
					answer = "(nothing came back)"
				}
				if !strings.HasSuffix(answer, "\n") {
					answer += "\n"
				}
				text += "\n--- sent\n" + strings.TrimSuffix(ex.Request, "\n") + "\n\n--- received\n" + answer
			}
			if err := c.print(rep, "%s", text); err != nil {
				return err
			}
			if !passed {
				return errFailed
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "your agent's POST /execute URL")
	cmd.Flags().StringVar(&pub, "public-key", "", "the base58 Ed25519 key its results are signed with (crtx creator keygen prints it)")
	cmd.MarkFlagRequired("endpoint")
	cmd.MarkFlagRequired("public-key")
	return cmd
}
