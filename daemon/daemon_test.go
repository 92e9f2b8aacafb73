package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// Validate refuses each bad setting before anything opens, naming its flag,
// and takes the defaults as they are.
func TestValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for flag, bad := range map[string]func(*Config){
		"--log-level":               func(c *Config) { c.LogLevel = "loud" },
		"--log-format":              func(c *Config) { c.LogFormat = "xml" },
		"--db-conns":                func(c *Config) { c.DB, c.DBConns = "postgres://x/y", 0 },
		"--db":                      func(c *Config) { c.DB = "mysql://x/y" },
		"--platform-fee-bps":        func(c *Config) { c.PlatformFeeBps = 10001 },
		"--block-interval":          func(c *Config) { c.BlockInterval = 0 },
		"--rollup-interval":         func(c *Config) { c.RollupInterval = -time.Second },
		"--recovery-interval":       func(c *Config) { c.RecoveryInterval = 0 },
		"--release-interval":        func(c *Config) { c.ReleaseInterval = 0 },
		"--max-dispatches":          func(c *Config) { c.MaxDispatches = -1 },
		"--lease":                   func(c *Config) { c.Lease = -time.Second },
		"--max-dispatch-share":      func(c *Config) { c.MaxDispatchShare = 0 },
		"--max-inflight-per-wallet": func(c *Config) { c.MaxInFlightPerWallet = -1 },
		"--public-url":              func(c *Config) { c.PublicURL = "crtx.example" },
	} {
		c := Defaults()
		bad(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: Validate() = %v, want an error naming it", flag, err)
		}
	}
}

// A busy address names the flag that moves the marketplace elsewhere.
func TestBusyAddressNamesTheFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := Defaults()
	cfg.Addr, cfg.Data, cfg.LogOutput = ln.Addr().String(), t.TempDir(), io.Discard
	d, err := Start(context.Background(), cfg)
	if err == nil {
		d.Close()
		t.Fatal("started on a busy address")
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "--addr") {
		t.Errorf("error %q does not say how to pick another address", err)
	}
}

// An admin token short enough to guess is refused at start, with a word
// on how to make a good one; one of 32 characters starts.
func TestShortAdminTokenRefused(t *testing.T) {
	for token, ok := range map[string]bool{"0123456789abcdef0123456789abcde\n": false, "0123456789abcdef0123456789abcdef\n": true} {
		cfg := Defaults()
		cfg.Addr, cfg.Data, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), io.Discard
		cfg.AdminTokenFile = filepath.Join(cfg.Data, "admin-token")
		if err := os.WriteFile(cfg.AdminTokenFile, []byte(token), 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := Start(context.Background(), cfg)
		if err == nil {
			d.Close()
		}
		switch {
		case ok && err != nil:
			t.Errorf("a token of 32 characters: %v", err)
		case !ok && (err == nil || !strings.Contains(err.Error(), "at least 32") || !strings.Contains(err.Error(), "openssl rand -base64 32")):
			t.Errorf("a token of 31 characters: %v, want a refusal saying how to make one", err)
		}
	}
}

// The operator's command in a shortfall's message works where the
// marketplace runs: the admin API when it serves one, else crtxd ledger
// deposit on its store (on SQLite once crtxd has stopped).
func TestOperatorDeposit(t *testing.T) {
	const wallet = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"admin API", Config{OperatorHints: true, AdminTokenFile: "/srv/crtx/admin token", PublicURL: "http://127.0.0.1:8080/"},
			`curl -s -X POST http://127.0.0.1:8080/v1/admin/deposits -H "Authorization: Bearer $(cat '/srv/crtx/admin token')" -H 'Content-Type: application/json' -d '{"environment": "mainnet", "wallet": "` + wallet + `", "amount_usdc": 2.5}'`},
		{"SQLite", Config{OperatorHints: true, Data: "/srv/crtx"},
			"crtxd ledger deposit --data /srv/crtx --environment mainnet --wallet " + wallet + " --amount 2.5 (once crtxd has stopped: it holds the folder)"},
		{"PostgreSQL", Config{OperatorHints: true, DB: "postgres://crtx:secret@db/crtx"},
			`crtxd ledger deposit --db "$CRTX_DB" --environment mainnet --wallet ` + wallet + " --amount 2.5"},
	} {
		if got := operatorDeposit(c.cfg)(crtx.Mainnet, wallet, 2_500_000); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// A served marketplace names none of its paths to its callers.
	if operatorDeposit(Config{AdminTokenFile: "/srv/crtx/admin", PublicURL: "http://127.0.0.1:8080", Data: "/srv/crtx"}) != nil {
		t.Error("a marketplace without OperatorHints names its operator's command")
	}
}
