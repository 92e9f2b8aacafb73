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
// answer comes after delay, as an agent that thinks for that long; with
// stream, asked for a stream, its first piece comes at once and its last
// after delay, as a language model's answer.
func benchStub(ctx context.Context, args []string, delay time.Duration, stream bool, tls [2]string) error {
	seed, err := hex.DecodeString(args[1])
	if err != nil || len(seed) != ed25519.SeedSize {
		return errors.New("crtxd bench stub: SEED is 32 bytes in hex")
	}
	if delay < 0 {
		return errors.New("crtxd bench stub: --delay must not be negative")
	}
	wait := func(ctx context.Context) error {
		if delay <= 0 {
			return nil
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	key := ed25519.NewKeyFromSeed(seed)
	var stub *creator.Handler
	if stream {
		stub = creator.NewStreamHandler(key, func(ctx context.Context, r creator.Request, yield func(string)) (int, error) {
			yield("ok ")
			if err := wait(ctx); err != nil {
				return 0, err
			}
			yield(r.Task)
			return 1, nil
		}, creator.Options{})
	} else {
		stub = creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
			if err := wait(ctx); err != nil {
				return "", 0, err
			}
			return "ok " + r.Task, 1, nil
		}, creator.Options{})
	}
	srv := &http.Server{Addr: args[0], Handler: stub}
	if tls[0] != "" {
		go func() { <-ctx.Done(); srv.Close() }()
		if err := srv.ListenAndServeTLS(tls[0], tls[1]); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	return serveUntilDone(ctx, srv)
}

// serveUntilDone serves until ctx ends.
func serveUntilDone(ctx context.Context, srv *http.Server) error {
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
