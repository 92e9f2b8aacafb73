package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/crtx-market/crtx/creator"
)

// benchProxy runs the baseline: a plain reverse proxy on addr to target,
// until ctx ends ("crtxd bench proxy ADDR TARGET IDLE").
//
// Its Transport keeps as many idle connections to the stub as the load has
// clients (IDLE, crtxd bench passes --clients), as the marketplace's
// dispatcher keeps its own: with Go's default of two a closed loop of
// clients would reconnect on most requests, and the baseline would be
// slower than a proxy anyone would run.
func benchProxy(ctx context.Context, args []string) error {
	target, err := url.Parse(args[1])
	if err != nil {
		return err
	}
	idle, err := strconv.Atoi(args[2])
	if err != nil || idle < 1 {
		return errors.New("crtxd bench proxy: IDLE is a number of connections")
	}
	p := httputil.NewSingleHostReverseProxy(target)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, idle
	p.Transport = t
	return serveUntilDone(ctx, &http.Server{Addr: args[0], Handler: p})
}

// benchStub serves the stub creator on the creator SDK, signing with the
// key of the given hex seed: a throwaway key of one run, on loopback. Each
// answer comes after delay, as an agent that thinks for that long.
func benchStub(ctx context.Context, args []string, delay time.Duration) error {
	seed, err := hex.DecodeString(args[1])
	if err != nil || len(seed) != ed25519.SeedSize {
		return errors.New("crtxd bench stub: SEED is 32 bytes in hex")
	}
	if delay < 0 {
		return errors.New("crtxd bench stub: --delay must not be negative")
	}
	stub := creator.NewHandler(ed25519.NewKeyFromSeed(seed), func(ctx context.Context, r creator.Request) (string, int, error) {
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return "", 0, ctx.Err()
			}
		}
		return "ok " + r.Task, 1, nil
	}, creator.Options{})
	return serveUntilDone(ctx, &http.Server{Addr: args[0], Handler: stub})
}

// serveUntilDone serves until ctx ends.
func serveUntilDone(ctx context.Context, srv *http.Server) error {
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
