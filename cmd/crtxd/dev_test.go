package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/examples/agents"
	"github.com/crtx-market/crtx/keyfile"
)

// syncBuffer is a buffer a running command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDev runs crtxd dev on data, with flags, until the test ends and
// returns its banner and a function that stops it and wants exit 0.
func startDev(t *testing.T, data string, flags ...string) (banner string, stop func()) {
	c, cancel := context.WithCancel(ctx)
	var out, errs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(c, append([]string{"dev", "--data", data, "--addr", "127.0.0.1:0"}, flags...), &out, &errs)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Ctrl-C stops it") {
		select {
		case code := <-done:
			t.Fatalf("crtxd dev stopped: exit %d\n%s%s", code, out.String(), errs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner:\n%s%s", out.String(), errs.String())
		}
	}
	if strings.Contains(errs.String(), "open-file limit") {
		t.Errorf("crtxd dev warned at start: %s", errs.String())
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("crtxd dev: exit %d\n%s", code, errs.String())
		}
	}
	t.Cleanup(stop)
	return out.String(), stop
}

// The creator quick start of README.md works as written on a fresh crtxd
// dev: its demo wallet holds the collateral of the sample listing on
// mainnet, the banner says so and names the next command, and the sample
// lists; the next start tops the wallet up again.
func TestDevCreatorQuickStart(t *testing.T) {
	// A folder with a space: the banner's shell lines quote its paths.
	data := filepath.Join(t.TempDir(), "dev data")
	banner, stop := startDev(t, data)
	keypair := filepath.Join(data, "demo-wallet.json")
	for _, want := range []string{"100 USDC on devnet and 10 on mainnet, topped up on each start",
		"export CRTX_URL=http://127.0.0.1:", "CRTX_KEYPAIR='" + keypair + "'\n", "crtx creator keygen --out agent-key.json"} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
	url := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(banner)[1]
	key, err := keyfile.Load(keypair)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := client.New(url, "").SignIn(ctx, key)
	if err != nil {
		t.Fatal(err)
	}

	// The creator's agent, as `textstats --key agent-key.json --marketplace $CRTX_URL` runs it.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, skey, _ := ed25519.GenerateKey(nil)
	ready := make(chan [2]string, 1)
	go agents.Run(actx, "127.0.0.1:0", skey, url, nil, agents.TextStats, func(u, pub string) { ready <- [2]string{u, pub} })
	ep := <-ready
	raw, err := os.ReadFile("../../examples/textstats/listing.json")
	if err != nil {
		t.Fatal(err)
	}
	var p crtx.ListingParams
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p.EndpointURL, p.SigningPublicKey = &ep[0], &ep[1]
	a, err := c.WithAgentKey(skey).CreateListing(ctx, p)
	if err != nil {
		t.Fatalf("crtx creator create --file listing.json on crtxd dev: %v", err)
	}
	if a.Collateral != 10*crtx.MicroPerUSDC {
		t.Errorf("collateral %s", a.Collateral)
	}
	stop()

	banner, _ = startDev(t, data)
	url = regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(banner)[1]
	c, _, err = client.New(url, "").SignIn(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Balances[crtx.Mainnet].Available; got != 10*crtx.MicroPerUSDC {
		t.Errorf("after a second start the demo wallet has %s USDC on mainnet, want 10", got)
	}
}
