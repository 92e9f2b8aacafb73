package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/crtx-market/crtx/daemon"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := daemon.Defaults()
	cfg.LogOutput = stderr
	fs := newFlags("serve", &cfg, stderr)
	serveFlags(fs, &cfg)
	gc := fs.Int("gc-percent", 400, "the Go collector's GOGC: a larger heap between collections for less CPU (GOGC wins when set)")
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	if os.Getenv("GOGC") == "" {
		// The marketplace's live heap is small and its allocation rate high:
		// collecting at 5× the live heap instead of 2× costs tens of MiB
		// and saves CPU on every request.
		debug.SetGCPercent(*gc)
	}
	d, err := daemon.Start(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		// Stopped while starting (a migration, say, rolled back whole): a
		// stop, not a failure.
		fmt.Fprintln(stderr, "crtxd: stopped before it started serving")
		return nil
	}
	if err != nil {
		return err
	}
	return d.Wait()
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := daemon.Defaults()
	fs := newFlags("migrate", &cfg, stderr)
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	if err := cfg.Validate(); err != nil {
		return err
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
