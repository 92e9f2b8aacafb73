package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

// streamHold is how long a stream of the stream scenario stays open after
// its first delta: a short answer of a language model.
const streamHold = time.Second

// The stream scenarios' agent is a stub that streams (bench stub
// --stream): its first piece at once, its last after a hold.
//
// stream: --stream-rate streams a second for --duration, straight to the
// stub, then through the marketplace; the figures are the time to the
// first delta event, so the marketplace's p50 over the stub's is what it
// adds to the first words.
//
// held: --held-streams streams arriving --held-rate a second, each held
// open --held-for after its first delta, through the marketplace: the
// most streams in flight at once, and the marketplace's peak RSS holding
// them.

// streamDirect is the stream scenario's baseline: the stub's own streams,
// asked for as the marketplace asks.
func streamDirect(f benchFlags, gen *loadClient, stubURL string) result {
	return timedArrivals(fmt.Sprintf("stream: first delta, stub alone at %d/s", f.streamRate), f.streamRate, streams(f), func(int) (time.Duration, error) {
		// An execution of its own each: the stub answers a retry of one
		// from memory, unstreamed.
		body, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 30})
		return streamed(gen, stubURL, "", string(body), "result", `"status":"completed"`)
	})
}

// streams is how many streams the stream scenario opens.
func streams(f benchFlags) int {
	return max(1, int(float64(f.streamRate)*f.dur.Seconds()))
}

// streamed opens one stream and returns the time to its first delta; it
// fails unless the stream's last event is named last and its data holds
// want.
func streamed(gen *loadClient, u, key, body, last, want string) (time.Duration, error) {
	first, name, data, err := gen.stream(u, key, body)
	switch {
	case err != nil:
		return 0, err
	case name != last || !bytes.Contains(data, []byte(want)):
		return 0, fmt.Errorf("the stream ended with %q: %.200s", name, data)
	}
	return first, nil
}

// benchStreams runs the stream scenarios on the marketplace at base
// (process pid): streamURL and heldURL are the stubs', empty for a
// scenario not run.
func benchStreams(ctx context.Context, f benchFlags, cfg daemon.Config, base, pprofAddr string, pid int, skey ed25519.PrivateKey,
	streamURL, heldURL string, run func(result), profile func(scenario string) (stop func() error), stderr io.Writer) error {
	gen := newLoadClient()
	defer gen.reset()
	// through lists the stub at u as agents enough for load (and wallets
	// enough to pay), and returns what opens stream i.
	through := func(u string, load slowFlags) (func(i int) (time.Duration, error), error) {
		p := sizeSlow(f, load, cfg)
		g := f
		g.agents, g.wallets = p.agents, p.wallets
		fmt.Fprintf(stderr, "streams: listing %d agents, funding %d wallets…\n", p.agents, p.wallets)
		agents, keys, err := benchParties(ctx, base, g, skey, u, crtx.Devnet, 0)
		if err != nil {
			return nil, err
		}
		return func(i int) (time.Duration, error) {
			return streamed(gen, base+"/v1/agents/"+agents[i%len(agents)]+"/execute", keys[i%len(keys)], `{"task":"t"}`,
				string(crtx.ExecCompleted), `"status":"completed"`)
		}, nil
	}
	if streamURL != "" {
		n := streams(f)
		open, err := through(streamURL, slowFlags{calls: n, rate: f.streamRate, delay: streamHold})
		if err != nil {
			return err
		}
		stop := profile("stream")
		run(timedArrivals(fmt.Sprintf("stream: first delta, marketplace at %d/s", f.streamRate), f.streamRate, n, open))
		if err := stop(); err != nil {
			return err
		}
		settle(pid, time.Minute)
	}
	if heldURL == "" {
		return nil
	}
	open, err := through(heldURL, f.held)
	if err != nil {
		return err
	}
	resetPeakRSS(pid)
	// Taken when the most streams are open: the last arrivals, every one
	// before them still held.
	heap := heapAt(f, cfg, "held", pprofAddr, max(f.held.span(), f.held.delay)-200*time.Millisecond, stderr)
	r := timedArrivals(fmt.Sprintf("held: %d streams at %d/s, held %s", f.held.calls, f.held.rate, f.held.delay), f.held.rate, f.held.calls, open)
	r.PeakRSSMB = peakRSS(pid)
	run(r)
	fmt.Fprintf(stderr, "%-44s %d completed, %d failed; peak RSS %.0f MiB\n", "", r.OK, r.Errors, r.PeakRSSMB)
	if err := <-heap; err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	settle(pid, time.Minute)
	return nil
}
