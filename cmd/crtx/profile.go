package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
)

// profile is one entry of the config file.
type profile struct {
	URL     string `json:"url"`
	APIKey  string `json:"api_key"`
	Keypair string `json:"keypair"`
}

// config is the config file: named profiles and the one used by default.
type config struct {
	Profile  string             `json:"profile"`
	Profiles map[string]profile `json:"profiles"`
}

func configDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "."
	}
	return filepath.Join(dir, "crtx")
}

func configPath() string {
	if p := os.Getenv("CRTX_CONFIG"); p != "" {
		return p
	}
	return filepath.Join(configDir(), "config.json")
}

// readConfig reads the config file; a missing file is an empty config.
func readConfig() (config, error) {
	path := configPath()
	var c config
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// errNoProfile is a profile named but not in the config file.
var errNoProfile = errors.New("no such profile")

// loadProfile reads the named (or default) profile; no file is no profile.
func loadProfile(name string) (profile, error) {
	c, err := readConfig()
	if err != nil {
		return profile{}, err
	}
	if name == "" {
		name = c.Profile
	}
	if name == "" {
		return profile{}, nil
	}
	p, ok := c.Profiles[name]
	if !ok {
		return profile{}, fmt.Errorf("%s has no profile %q (save one with: crtx login --profile %s): %w", configPath(), name, name, errNoProfile)
	}
	return p, nil
}

// saveProfile writes p under name, readable by its owner alone since it
// holds an API key, and makes it the default when there is none yet.
func saveProfile(name string, p profile) error {
	c, err := readConfig()
	if err != nil {
		return err
	}
	if c.Profiles == nil {
		c.Profiles = map[string]profile{}
	}
	c.Profiles[name] = p
	if c.Profile == "" {
		c.Profile = name
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	path := configPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (c *cli) loginCmd() *cobra.Command {
	var env string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Save a profile: the marketplace URL, your wallet and an API key",
		Long: `login saves a profile in the config file (~/.config/crtx/config.json, or CRTX_CONFIG),
so later commands need no flags or variables.

With an API key (--api-key or CRTX_API_KEY) it checks the key and saves it. Without one
(an empty one counts as none) it signs in with your wallet key file and creates a key for
--environment, named after this machine; the key the profile held before is never needed. The profile is named by --profile ("default" when not given) and becomes
the default if there is none yet.`,
		Example: `  crtx login --url http://127.0.0.1:8080 --environment devnet
  crtx login --profile prod --url https://market.example --api-key crtx_live_…`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := crtx.ParseEnvironment("--environment", env)
			if err != nil {
				return err
			}
			// Only a key given now counts, never the profile's: login
			// replaces that one, which may be stale (revoked, or of a
			// marketplace whose data is gone).
			key := ""
			if c.apiKeyGiven {
				key = c.apiKey
			}
			if key == "" {
				s, err := c.session(ctx)
				if err != nil {
					return err
				}
				host, _ := os.Hostname()
				k, err := s.CreateKey(ctx, client.KeyParams{Name: "crtx login on " + firstOf(host, "this machine"), Environment: e})
				if err != nil {
					return err
				}
				key = k.Key
			}
			w, err := c.api(key).Wallet(ctx)
			if err != nil {
				return fmt.Errorf("checking the API key: %w", err)
			}
			name := firstOf(c.flags.profile, os.Getenv("CRTX_PROFILE"), "default")
			if err := saveProfile(name, profile{URL: c.url, APIKey: key, Keypair: c.keypair}); err != nil {
				return err
			}
			c.last = nil // the answer is this command's own
			return c.print(map[string]string{"profile": name, "config": configPath(), "url": c.url, "wallet": w.Wallet, "environment": string(keyEnvOf(key))},
				"Logged in to %s as %s with a %s key; profile %q saved in %s\n", c.url, w.Wallet, keyEnvOf(key), name, configPath())
		},
	}
	cmd.Flags().StringVar(&env, "environment", "devnet", "environment of the key created when none is given: devnet or mainnet")
	return cmd
}

// keyEnvOf names the environment of an API key by its prefix.
func keyEnvOf(key string) crtx.Environment {
	if strings.HasPrefix(key, crtx.TestKeyPrefix) {
		return crtx.Devnet
	}
	return crtx.Mainnet
}

func (c *cli) sessionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "session",
		Short: "Sign in with your wallet and print a session token (for the web dashboards and curl)",
		Args:  cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, _, err := c.wallet()
			if err != nil {
				return err
			}
			_, s, err := c.api("").SignIn(cmd.Context(), key)
			if err != nil {
				return err
			}
			if err := c.print(s, "%s\n", s.SessionToken); err != nil || c.json {
				return err
			}
			// The token alone on standard output, for $(crtx session) in a
			// curl header; where it goes on standard error.
			_, err = fmt.Fprintf(c.errOut, "(expires %s)\nPaste it on %s/login, under \"With the crtx CLI\", to open the dashboard as this wallet; or send it as Authorization: Bearer to the API\n",
				s.ExpiresAt.Format(time.RFC1123), c.url)
			return err
		},
	}
}
