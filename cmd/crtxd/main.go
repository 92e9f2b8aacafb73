// Command crtxd is the crtx marketplace server and its operator tool:
//
//	crtxd init     make a new marketplace's keys
//	crtxd serve    run the marketplace
//	crtxd dev      run it for development, with a data folder of its own
//	crtxd migrate  apply database migrations
//	crtxd ledger   verify the ledger, deposit or withdraw funds
//	crtxd admin    resolve disputes, verify creators, suspend agents
//	crtxd bench    measure the marketplace against a bare reverse proxy
//
// "crtxd help COMMAND" or "crtxd COMMAND --help" describes each.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code. Flags not
// given on the command line come from CRTX_<FLAG> before any command runs,
// hidden ones included; a bad variable is a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdline.Run(ctx, newCrtxd(), args, func(cmd *cobra.Command) error { return fromEnvironment(cmd.Flags()) },
		nil, stdout, stderr, func(err error) int {
			fmt.Fprintf(stderr, "crtxd: %v\n", err)
			return cmdline.ExitFailed
		})
}

// newCrtxd builds the command tree; each run builds its own, so no flag
// value outlives the run that parsed it.
func newCrtxd() *cobra.Command {
	root := &cobra.Command{
		Use:   "crtxd",
		Short: "The crtx marketplace server and its operator tool",
		Long: `crtxd runs the crtx marketplace (serve, or dev for development) and is its
operator's tool: database migrations, the ledger's verification and funding, disputes,
creators and agents.

Every flag can also be set as CRTX_<FLAG>, upper case with - as _ (--addr as CRTX_ADDR,
--db-conns as CRTX_DB_CONNS); a flag on the command line wins over the variable.`,
		Example: `  crtxd dev
  crtxd serve --addr 0.0.0.0:8080 --public-url https://crtx.example --data /var/lib/crtx
  crtxd ledger verify --data /var/lib/crtx`,
		Version: crtx.Version(),
	}
	root.SetVersionTemplate("crtxd {{.Version}}\n")
	return cmdline.Group(root, initCommand(), serveCommand(), devCommand(), migrateCommand(), ledgerCommand(), adminCommand(), benchCommand())
}
