package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/store/storetest"
)

// stallingCreator serves an agent whose work waits until release is
// called: the first delivery of each execution hangs until then, and the
// creator SDK answers a later delivery of the same execution with that
// work's result. stalled counts the executions waiting.
func stallingCreator(t *testing.T) (endpoint, publicKey string, stalled func() int, release func()) {
	var mu sync.Mutex
	seen, waiting := map[string]bool{}, 0
	released := make(chan struct{})
	key := agentKey()
	h := creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
		mu.Lock()
		first := !r.Test && !seen[r.ExecutionID]
		seen[r.ExecutionID] = true
		if first {
			waiting++
		}
		mu.Unlock()
		if first {
			<-released
			mu.Lock()
			waiting--
			mu.Unlock()
		}
		return "done: " + r.Task, 0, nil
	}, creator.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(release)
	return srv.URL, h.PublicKey(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return waiting
	}, release
}

// stalledMarket lists a stalling agent (60 s timeout) on the marketplace at
// base and returns a caller's key client and the agent's id.
func stalledMarket(t *testing.T, base, adminToken, endpoint, publicKey string) (*client.Client, string) {
	t.Helper()
	admin := client.New(base, adminToken)
	party := func() *client.Client {
		_, k, _ := ed25519.GenerateKey(nil)
		if _, err := admin.Deposit(ctx, crtx.Mainnet, crtx.Address(k.Public().(ed25519.PublicKey)), 100*crtx.MicroPerUSDC); err != nil {
			t.Fatal(err)
		}
		s, _, err := client.New(base, "").SignIn(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, timeout, tags := crtx.USDC(100_000), 60, []string{"data"}
	a, err := holding(party(), publicKey).CreateListing(ctx, crtx.ListingParams{Name: str("Stalls"), Tagline: str("Stalls."), Description: str("Stalls."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(endpoint), SigningPublicKey: str(publicKey), TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	k, err := party().CreateKey(ctx, client.KeyParams{Name: "takeover", Environment: crtx.Mainnet})
	if err != nil {
		t.Fatal(err)
	}
	return client.New(base, k.Key), a.AgentID
}

// startStalled sends n asynchronous executions and waits until the
// creator holds every first delivery.
func startStalled(t *testing.T, key *client.Client, agent string, n int, stalled func() int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		rec, err := key.Execute(ctx, agent, crtx.ExecuteParams{Task: fmt.Sprint(i), Async: true}, client.ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ExecutionID)
	}
	for deadline := time.Now().Add(10 * time.Second); stalled() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d executions reached the creator", stalled(), n)
		}
	}
	return ids
}

// completed polls the executions until each is completed. The processes
// run with leases of an hour (--lease 1h): an execution completed at all
// was taken over without waiting for its lease to run out, which is what
// the tests show, with no bound on how fast.
func completed(t *testing.T, key *client.Client, ids []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for _, id := range ids {
		for {
			rec, err := key.Execution(ctx, id)
			if err == nil && rec.Status == crtx.ExecCompleted {
				break
			}
			if err == nil && rec.Status.Final() {
				t.Fatalf("execution %s ended %s: %+v", id, rec.Status, rec.Error)
			}
			if time.Now().After(deadline) {
				t.Fatalf("execution %s still %s", id, rec.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// longLease is the lease of the takeover tests' processes: far past the
// tests' own life, so that only a takeover completes their executions.
const longLease = "1h"

// After a kill -9, the restarted crtxd runs what was in flight at once —
// it holds the folder alone — not when the leases run out.
func TestRestartResumesAtOnce(t *testing.T) {
	data := t.TempDir()
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("takeover-test-admin-token-0123456789"), 0o600)
	args := []string{"--addr", freePort(t), "--data", data, "--admin-token-file", token, "--allow-private-endpoints", "--rate-limit-ip", "0",
		"--lease", longLease}
	endpoint, pub, stalled, release := stallingCreator(t)
	p := startProc(t, args...)
	key, agent := stalledMarket(t, p.url, "takeover-test-admin-token-0123456789", endpoint, pub)
	// More than one claim's batch (32): each is taken once.
	ids := startStalled(t, key, agent, 40, stalled)
	p.kill()
	release() // the work is done; the dead process never hears of it
	p = startProc(t, args...)
	defer p.kill()
	// The folder's one process takes everything over at start.
	completed(t, key, ids)
}

// When a replica on PostgreSQL dies, another learns it from its missed
// heartbeats and takes its executions over, not when the leases run out.
func TestReplicaDeathIsNoticed(t *testing.T) {
	db := storetest.SchemaDSN(t)
	data := t.TempDir()
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("takeover-test-admin-token-0123456789"), 0o600)
	replica := func() *proc {
		return startProc(t, "--addr", "127.0.0.1:0", "--db", db, "--data", data, "--admin-token-file", token,
			"--allow-private-endpoints", "--rate-limit-ip", "0", "--lease", longLease)
	}
	a := replica()
	defer a.kill()
	b := replica()
	endpoint, pub, stalled, release := stallingCreator(t)
	key, agent := stalledMarket(t, a.url, "takeover-test-admin-token-0123456789", endpoint, pub)
	// The executions go to b, which dies with them in flight.
	ids := startStalled(t, client.New(b.url, key.Token()), agent, 4, stalled)
	b.kill()
	release()
	completed(t, key, ids)
}
