package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/keyfile"
)

func (c *cli) creatorKeygen(ctx context.Context, args []string) error {
	fs := c.flags("creator keygen")
	out := fs.String("out", "agent-key.json", "where to write the signing key (mode 0600)")
	if _, err := c.positional(fs, args, 0); err != nil {
		return err
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	if err := keyfile.Write(*out, key); err != nil {
		return err
	}
	pub := crtx.Address(key.Public().(ed25519.PublicKey))
	return c.print(map[string]string{"signing_public_key": pub, "file": *out},
		"signing key written to %s\nsigning_public_key: %s\n", *out, pub)
}

func (c *cli) creatorList(ctx context.Context, args []string) error {
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	agents, err := cl.CreatorAgents(ctx)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, a := range agents {
		status := string(a.Status)
		if a.Suspended {
			status += " (suspended)"
		}
		fmt.Fprintf(&b, "%s  %-28s %-9s %8s USDC  collateral %s USDC  %d runs\n", a.AgentID, a.Name, status, a.Price, a.Collateral, a.TotalExecutions)
	}
	return c.print(api.CreatorAgentList{Agents: agents}, "%s", b.String())
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

func (c *cli) creatorCreate(ctx context.Context, args []string) error {
	fs := c.flags("creator create")
	file := fs.String("file", "", "the listing as JSON (the body of POST /v1/creator/agents)")
	if _, err := c.positional(fs, args, 0); err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: --file is required", errUsage)
	}
	p, err := listingFile(*file)
	if err != nil {
		return err
	}
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	a, err := cl.CreateListing(ctx, p)
	if err != nil {
		return err
	}
	return c.print(a, "listed %s (%s), %s USDC of collateral locked\n%s\n", a.AgentID, a.Name, a.Collateral, a.OnChainListing)
}

func (c *cli) creatorUpdate(ctx context.Context, args []string) error {
	fs := c.flags("creator update")
	file := fs.String("file", "", "the changes as JSON (the body of PATCH /v1/creator/agents/{id})")
	pos, err := c.positional(fs, args, 1)
	if err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: --file is required", errUsage)
	}
	p, err := listingFile(*file)
	if err != nil {
		return err
	}
	return c.patch(ctx, pos[0], p, "updated")
}

func (c *cli) patch(ctx context.Context, id string, p crtx.ListingParams, done string) error {
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	a, err := cl.UpdateListing(ctx, id, p)
	if err != nil {
		return err
	}
	return c.print(a, "%s %s: %s\n", done, a.AgentID, a.Status)
}

func (c *cli) creatorStatus(status crtx.AgentStatus) command {
	return func(ctx context.Context, args []string) error {
		pos, err := c.positional(c.flags("creator "+string(status)), args, 1)
		if err != nil {
			return err
		}
		return c.patch(ctx, pos[0], crtx.ListingParams{Status: &status}, map[crtx.AgentStatus]string{"paused": "paused", "active": "resumed"}[status])
	}
}

func (c *cli) creatorDelist(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("creator delist"), args, 1)
	if err != nil {
		return err
	}
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	a, err := cl.Delist(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.print(a, "delisted %s; its %s USDC of collateral is returned 72 hours after its last execution\n", a.AgentID, a.Collateral)
}

func (c *cli) creatorEarnings(ctx context.Context, args []string) error {
	fs := c.flags("creator earnings")
	env := fs.String("environment", "mainnet", "mainnet or devnet")
	if _, err := c.positional(fs, args, 0); err != nil {
		return err
	}
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	e, err := cl.CreatorEarnings(ctx, envOf(*env))
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, d := range e.Days {
		fmt.Fprintf(&b, "%s  %10s USDC  %d executions\n", d.Date, d.Earned, d.Executions)
	}
	fmt.Fprintf(&b, "total       %10s USDC  %d executions (%s)\n", e.Total, e.Executions, e.Environment)
	return c.print(e, "%s", b.String())
}

// errFailed ends a command that ran but found problems; its report is printed.
var errFailed = errors.New("the endpoint did not pass")

// creatorTest asks the marketplace to send a synthetic, signed request to
// the endpoint and prints what came back. It exits 0 only when the reply
// has the protocol's shape and a valid signature.
func (c *cli) creatorTest(ctx context.Context, args []string) error {
	fs := c.flags("creator test")
	endpoint := fs.String("endpoint", "", "the creator's POST /execute URL")
	pub := fs.String("public-key", "", "the base58 Ed25519 key results must be signed with")
	if _, err := c.positional(fs, args, 0); err != nil {
		return err
	}
	if *endpoint == "" || *pub == "" {
		return fmt.Errorf("%w: --endpoint and --public-key are required", errUsage)
	}
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	rep, err := cl.TestExecution(ctx, *endpoint, *pub)
	if err != nil {
		return err
	}
	mark := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "FAILED"
	}
	text := fmt.Sprintf("endpoint   %s\nreachable  %s (%d ms)\nshape      %s\nsignature  %s\n",
		*endpoint, mark(rep.Reachable), rep.LatencyMS, mark(rep.ShapeOK), mark(rep.SignatureOK))
	if rep.Status != "" {
		text += "status     " + rep.Status + "\n"
	}
	for _, p := range rep.Problems {
		text += "problem    " + p + "\n"
	}
	if err := c.print(rep, "%s", text); err != nil {
		return err
	}
	if !rep.Reachable || !rep.ShapeOK || !rep.SignatureOK {
		return errFailed
	}
	return nil
}
