// Package agents holds the example agents (text statistics, JSON/CSV
// conversion) and what runs one as a service. The programs under
// examples/textstats and examples/jsoncsv run them alone; `crtxd dev` runs
// both beside a marketplace.
package agents

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/keyfile"
)

// Main parses the flags, loads or creates the key and serves fn until
// SIGINT or SIGTERM. inputSchema and outputSchema are printed for listing.
func Main(name, defaultAddr string, fn creator.Func, inputSchema, outputSchema string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(command(ctx, name, defaultAddr, os.Args[1:], os.Stdout, os.Stderr, fn, inputSchema, outputSchema))
}

// command is Main without the process: it returns the exit code.
func command(ctx context.Context, name, defaultAddr string, args []string, stdout, stderr io.Writer,
	fn creator.Func, inputSchema, outputSchema string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", defaultAddr, "address to listen on")
	keyPath := fs.String("key", name+"-key.json", "signing key file (created if missing, Solana CLI format)")
	market := fs.String("marketplace", "", "the marketplace's URL: requests it did not sign are refused (required)")
	ids := fs.String("agent-id", "", "the agent ids this service is listed as, comma-separated: a request for any other agent is refused (optional)")
	insecure := fs.Bool("insecure-accept-unsigned", false, "serve without --marketplace, answering requests anyone signed or did not sign (local tests only)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	// Without the marketplace's key anyone who finds the endpoint can run
	// the agent for free: a forgotten flag must not serve that way.
	if *market == "" && !*insecure {
		fmt.Fprintf(stderr, "%s: --marketplace URL is required, so that requests the marketplace did not sign are refused\n"+
			"(--insecure-accept-unsigned serves without that check, for local tests only)\n", name)
		return 2
	}
	key, err := keyfile.LoadOrCreate(*keyPath)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	var agentIDs []string
	for _, id := range strings.Split(*ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			agentIDs = append(agentIDs, id)
		}
	}
	if err := Run(ctx, *addr, key, *market, agentIDs, fn, func(url, pub string) {
		fmt.Fprintf(stdout, "%s listening at %s\n  signing_public_key: %s\n  input_schema:  %s\n  output_schema: %s\n",
			name, url, pub, inputSchema, outputSchema)
		if *market == "" {
			fmt.Fprintf(stdout, "  accepting unsigned requests (--insecure-accept-unsigned)\n")
		}
	}); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// Run serves fn on addr until ctx ends; ready is told the endpoint URL
// and the signing public key once the listener is up. With agentIDs, a
// request for another agent is refused (creator.Options.AgentIDs).
func Run(ctx context.Context, addr string, key ed25519.PrivateKey, marketplace string, agentIDs []string, fn creator.Func, ready func(url, pub string)) error {
	opts := creator.Options{AgentIDs: agentIDs, Marketplace: marketplace}
	h := creator.NewHandler(key, fn, opts)
	mux := http.NewServeMux()
	mux.Handle("POST /execute", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	ready("http://"+ln.Addr().String()+"/execute", h.PublicKey())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
