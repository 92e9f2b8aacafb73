package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/crtx-market/crtx/daemon"
	"github.com/spf13/cobra"
)

func serveCommand() *cobra.Command {
	cfg := daemon.Defaults()
	var gc int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the marketplace",
		Long: `Run the marketplace: the REST API, the web pages and the background jobs (block sealing,
roll-ups, dispatch recovery, collateral release) on SQLite in --data or on PostgreSQL (--db).
SIGTERM or SIGINT stops it, letting in-flight requests finish for up to --shutdown-timeout.`,
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
	cmd.Flags().IntVar(&gc, "gc-percent", 400, "the Go collector's GOGC: a larger heap between collections for less CPU (GOGC wins when set)")
	return cmd
}

func serve(ctx context.Context, cfg daemon.Config, gc int, stderr io.Writer) error {
	if os.Getenv("GOGC") == "" {
		// The marketplace's live heap is small and its allocation rate high:
		// collecting at 5× the live heap instead of 2× costs tens of MiB
		// and saves CPU on every request.
		debug.SetGCPercent(gc)
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
