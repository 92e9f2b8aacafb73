// Command crtxd is the crtx marketplace server and its operator tool:
//
//	crtxd serve    run the marketplace
//	crtxd dev      run it for development, with a data folder of its own
//	crtxd migrate  apply database migrations
//	crtxd ledger   verify the ledger, deposit or withdraw funds
//	crtxd admin    resolve disputes, verify creators, suspend agents
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: crtxd <command> [flags]

commands:
  serve                         run the marketplace
  dev                           run it for development (./crtx-dev, private endpoints allowed)
  migrate                       apply database migrations and exit
  ledger verify [--environment E]
  ledger deposit --environment E --wallet W --amount A
  ledger withdraw --environment E --wallet W --amount A
  admin disputes list|resolve, admin creators verify|unverify, admin agents suspend|unsuspend,
  admin collateral release       operator tools (run "crtxd admin" for details)
  bench [--clients N] [--duration D] [--db DSN] [--only S] [--json F] [--svg F]
                                 measure the marketplace against a bare reverse proxy

Every flag can also be set as CRTX_<FLAG>, e.g. --addr as CRTX_ADDR.
Run "crtxd <command> -h" for its flags.
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "dev":
		err = dev(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], stdout, stderr)
	case "ledger":
		return ledger(ctx, args[1:], stdout, stderr)
	case "admin":
		err = admin(ctx, args[1:], stdout, stderr)
	case "bench":
		err = bench(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "crtxd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "crtxd: %v\n", err)
		return 1
	}
	return 0
}
