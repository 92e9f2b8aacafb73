package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/spf13/cobra"
)

// cli holds what every command shares: the settings, the output streams
// and the last response body.
type cli struct {
	flags struct {
		url, apiKey, keypair, profile string
	}
	// The settings in force: flags, then CRTX_* variables, then the profile.
	url, apiKey, keypair string
	// Whether the key file and the API key were given by flag or
	// variable, as against by the profile.
	keypairGiven, apiKeyGiven bool
	// Where the API key came from, for an error that refuses it, and
	// whether the command sent it.
	apiKeyFrom string
	keySent    bool
	// env is the environment a money command acted in, for the hints.
	env         crtx.Environment
	json        bool
	out, errOut io.Writer
	last        []byte // the last response body, for --json
}

// configure settles the settings before a command runs. A profile that
// does not exist yet is no error for a command that saves one.
func (c *cli) configure(saves bool) error {
	p, err := loadProfile(firstOf(c.flags.profile, os.Getenv("CRTX_PROFILE")))
	if err != nil && !(saves && errors.Is(err, errNoProfile)) {
		return err
	}
	c.url = strings.TrimRight(firstOf(c.flags.url, os.Getenv("CRTX_URL"), p.URL, "http://127.0.0.1:8080"), "/")
	c.apiKey = firstOf(c.flags.apiKey, os.Getenv("CRTX_API_KEY"), p.APIKey)
	c.apiKeyGiven = firstOf(c.flags.apiKey, os.Getenv("CRTX_API_KEY")) != ""
	switch {
	case c.flags.apiKey != "":
		c.apiKeyFrom = "--api-key"
	case os.Getenv("CRTX_API_KEY") != "":
		c.apiKeyFrom = "CRTX_API_KEY"
	default:
		c.apiKeyFrom = fmt.Sprintf("the profile in %s", configPath())
		if name := firstOf(c.flags.profile, os.Getenv("CRTX_PROFILE")); name != "" {
			c.apiKeyFrom = fmt.Sprintf("profile %q in %s", name, configPath())
		}
	}
	c.keypairGiven = firstOf(c.flags.keypair, os.Getenv("CRTX_KEYPAIR")) != ""
	c.keypair = firstOf(c.flags.keypair, os.Getenv("CRTX_KEYPAIR"), p.Keypair, filepath.Join(configDir(), "id.json"))
	return nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// api is a client for the marketplace with a credential, remembering each
// response body for --json.
func (c *cli) api(token string) *client.Client {
	return client.New(c.url, token).OnResponse(func(_ int, body []byte) { c.last = body })
}

// key is a client acting with the API key.
func (c *cli) key() (*client.Client, error) {
	if c.apiKey == "" {
		return nil, errors.New("this command needs an API key: run 'crtx login', or set CRTX_API_KEY or --api-key (create one with: crtx keys create NAME devnet)")
	}
	c.keySent = true
	return c.api(c.apiKey), nil
}

// runE is the body of a command that acts through a client.
type runE func(ctx context.Context, cl *client.Client, args []string) error

// withSession runs fn with a client signed in with the wallet key file.
func (c *cli) withSession(fn runE) func(*cobra.Command, []string) error {
	return c.acting(c.session, fn)
}

// withKey runs fn with a client acting with the API key.
func (c *cli) withKey(fn runE) func(*cobra.Command, []string) error {
	return c.acting(func(context.Context) (*client.Client, error) { return c.key() }, fn)
}

// acting opens the client a command acts with, then runs the command.
func (c *cli) acting(open func(context.Context) (*client.Client, error), fn runE) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cl, err := open(cmd.Context())
		if err != nil {
			return err
		}
		return fn(cmd.Context(), cl, args)
	}
}

// environment is the one a command shows when --environment is not given:
// the API key's (crtx_test_ keys are devnet's), else mainnet.
func (c *cli) environment(flag string) crtx.Environment {
	switch {
	case flag != "":
		return crtx.Environment(flag)
	case c.apiKey != "":
		return keyEnvOf(c.apiKey)
	}
	return crtx.Mainnet
}

// wallet loads the wallet key file.
func (c *cli) wallet() (ed25519.PrivateKey, string, error) {
	key, err := keyfile.Load(c.keypair)
	if err != nil {
		return nil, "", fmt.Errorf("%w (create a wallet with: crtx wallet new)", err)
	}
	return key, crtx.Address(key.Public().(ed25519.PublicKey)), nil
}

// session signs in with the wallet key file and returns a client acting
// with the new session.
func (c *cli) session(ctx context.Context) (*client.Client, error) {
	key, _, err := c.wallet()
	if err != nil {
		return nil, err
	}
	s, _, err := c.api("").SignIn(ctx, key)
	return s, err
}

// print writes, with --json, the last response body as received (or v as
// JSON for commands that ask nothing of the marketplace); else the text.
func (c *cli) print(v any, format string, args ...any) error {
	if c.json {
		if c.last != nil {
			_, err := c.out.Write(append(c.last[:len(c.last):len(c.last)], '\n'))
			return err
		}
		enc := json.NewEncoder(c.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(c.out, format, args...)
	return err
}

// printIDs prints a list as its ids, one a line, for a shell to capture
// (--ids); --json still prints the answer as received.
func (c *cli) printIDs(v any, ids []string) error {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(id + "\n")
	}
	return c.print(v, "%s", b.String())
}

// table lays out a list under a header row, its columns separated by two
// spaces, for print.
func table(header string, rows [][]any) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, header)
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				fmt.Fprint(w, "\t")
			}
			fmt.Fprint(w, v)
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	return b.String()
}
