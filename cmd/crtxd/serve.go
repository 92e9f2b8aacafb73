package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := daemon.Defaults()
	cfg.LogOutput = stderr
	fs := newFlags("serve", &cfg, stderr)
	serveFlags(fs, &cfg)
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Wait()
}

// dev runs the marketplace for development: its own data folder, private
// endpoints allowed, and an admin token made on first run.
func dev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := daemon.Defaults()
	cfg.Data = "./crtx-dev"
	cfg.AllowPrivateEndpoints = true
	cfg.BlockInterval = 1e9
	cfg.LogOutput = stderr
	fs := newFlags("dev", &cfg, stderr)
	serveFlags(fs, &cfg)
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	if cfg.AdminTokenFile == "" {
		cfg.AdminTokenFile = filepath.Join(cfg.Data, "admin-token")
		if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(cfg.AdminTokenFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			fmt.Fprintln(f, crtx.RandomBase62(40))
			f.Close()
		} else if !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, `crtx marketplace (development) at %s
  data:        %s
  admin token: %s
  try:         curl -s %s/.well-known/crtx.json
               curl -s -X POST %s/v1/devnet/airdrop -H 'Content-Type: application/json' -d '{"wallet":"<address>","amount_usdc":100}'
Ctrl-C stops it; a second run reuses the data folder.
`, d.URL, cfg.Data, cfg.AdminTokenFile, d.URL, d.URL)
	return d.Wait()
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := daemon.Defaults()
	fs := newFlags("migrate", &cfg, stderr)
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	s, err := daemon.OpenStore(ctx, cfg) // opening applies the migrations
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "migrations applied")
	return s.Close()
}

// flagErr hides the error the flag package has already printed.
func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}
