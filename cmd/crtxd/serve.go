package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/daemon"
	"github.com/spf13/cobra"
)

func serveCommand() *cobra.Command {
	cfg := daemon.Defaults()
	var gc collector
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the marketplace",
		Long: `Run the marketplace: the REST API, the web pages and the background jobs (block sealing,
roll-ups, dispatch recovery, collateral release) on SQLite in --data or on PostgreSQL (--db).
SIGTERM or SIGINT stops it, letting in-flight requests finish for up to --shutdown-timeout.
SIGHUP reads --admin-token-file again: the new token alone is taken from then on.`,
		Example: `  crtxd serve --addr 0.0.0.0:8080 --public-url https://crtx.example --data /var/lib/crtx --admin-token-file admin-token
  CRTX_DB=postgres://crtx@db/crtx crtxd serve --addr :8080 --db-conns 16`,
		Args: cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.LogOutput = cmd.ErrOrStderr()
			return serve(cmd.Context(), cfg, gc, cmd.ErrOrStderr())
		},
	}
	storeFlags(cmd.Flags(), &cfg)
	serveFlags(cmd.Flags(), &cfg)
	cmd.Flags().IntVar(&gc.percent, "gc-percent", 400, "the Go collector's GOGC: a larger heap between collections for less CPU (GOGC wins when set)")
	cmd.Flags().Int64Var(&gc.limitMiB, "memory-limit-mib", 0, "the Go runtime's soft memory limit in MiB: past it the collector runs more often, so resident memory stays near it at the cost of CPU (0: none; GOMEMLIMIT wins when set)")
	return cmd
}

// collector is how crtxd serve tunes the Go collector.
type collector struct {
	percent  int
	limitMiB int64
}

func serve(ctx context.Context, cfg daemon.Config, gc collector, stderr io.Writer) error {
	if gc.limitMiB < 0 || gc.limitMiB > math.MaxInt64>>20 {
		return fmt.Errorf("--memory-limit-mib %d: give 0 (none) or a size in MiB", gc.limitMiB)
	}
	if os.Getenv("GOGC") == "" {
		// The marketplace's live heap is small and its allocation rate high:
		// collecting at 5× the live heap instead of 2× costs tens of MiB
		// and saves CPU on every request.
		debug.SetGCPercent(gc.percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && gc.limitMiB > 0 {
		// With many calls in flight the 5× is what makes most of the
		// resident memory (docs/performance.md); the limit caps it.
		debug.SetMemoryLimit(gc.limitMiB << 20)
	}
	// SIGHUP reads the admin token file again: a token rotates on every
	// replica without a restart. Caught from before the start, so that a
	// reload during a slow start (migrations) does not kill the process;
	// it is handled once the daemon runs.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer func() { signal.Stop(hup); close(hup) }()
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
	go func() {
		for range hup {
			if err := d.ReloadAdminToken(); err != nil {
				fmt.Fprintf(stderr, "crtxd: SIGHUP: the admin token stays as it was: %v\n", err)
				continue
			}
			fmt.Fprintln(stderr, "crtxd: SIGHUP: the admin token was read again")
		}
	}()
	return d.Wait()
}

func migrateCommand() *cobra.Command {
	cfg := daemon.Defaults()
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database migrations and exit",
		Long: `Apply the database's migrations and exit, for a migration run as a step of its own
(crtxd serve applies them too when it starts).`,
		Example: `  crtxd migrate --db postgres://crtx@db/crtx`,
		Args:    cmdline.Args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			s, err := daemon.OpenStore(cmd.Context(), cfg) // opening applies the migrations
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
			return s.Close()
		},
	}
	storeFlags(cmd.Flags(), &cfg)
	return cmd
}
