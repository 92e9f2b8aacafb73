package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/keyfile"
)

// crtx verify --rpc follows an execution paid with USDC from the chain to
// the anchor memo of its block's successor on the local cluster; without
// --rpc a custom cluster has no public endpoint to read, which is a failure.
func TestVerifyThroughTheAnchor(t *testing.T) {
	ctx := context.Background()
	d, net, mint, mintAuth := startChainMarket(t)
	_, ak, _ := ed25519.GenerateKey(nil)
	srv := httptest.NewServer(creator.NewHandler(ak, func(_ context.Context, r creator.Request) (string, int, error) { return "anchored: " + r.Task, 0, nil }, creator.Options{}))
	defer srv.Close()
	agentID := listAgent(t, d, srv.URL, ak)

	pub, key, _ := ed25519.GenerateKey(nil)
	kp := filepath.Join(t.TempDir(), "id.json")
	if err := keyfile.Write(kp, key); err != nil {
		t.Fatal(err)
	}
	net.Airdrop(t, crtxpkg.Address(pub), 1_000_000_000)
	net.MintTo(t, mint, mintAuth, crtxpkg.Address(pub), 2*crtxpkg.MicroPerUSDC)
	t.Setenv("CRTX_SOLANA_RPC", "")
	crtx := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, append([]string{"--url", d.URL, "--keypair", kp}, args...), strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	if code, out := crtx("deposit", "2", "--environment", "devnet", "--pay", "--rpc", net.RPC); code != 0 {
		t.Fatalf("deposit --pay: %d\n%s", code, out)
	}
	_, out := crtx("--json", "keys", "create", "anchor", "devnet")
	var k struct{ Key string }
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	rec, err := client.New(d.URL, k.Key).Execute(ctx, agentID, crtxpkg.ExecuteParams{Task: "proof"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRTX_API_KEY", k.Key)
	anchored := regexp.MustCompile(`(?m)^ok     anchor +block \d+ is named by the memo of Solana transaction \w+ \(slot \d+, custom\), signed by the ledger authority$`)
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, out := crtx("verify", rec.ExecutionID, "--rpc", net.RPC)
		if code != 0 {
			t.Fatalf("verify: %d\n%s", code, out)
		}
		if anchored.MatchString(out) {
			break
		}
		if !strings.Contains(out, "not anchored yet") || time.Now().After(deadline) {
			t.Fatalf("verify does not reach the anchor:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Without --rpc, a local cluster's anchor is not read: "not checked",
	// no failure, unless the anchor is required.
	if code, out := crtx("verify", rec.ExecutionID); code != 0 || strings.Contains(out, "FAILED") ||
		!strings.Contains(out, "-      anchor             not checked: ") || !strings.Contains(out, "--rpc") {
		t.Errorf("verify of a custom cluster without --rpc: %d\n%s", code, out)
	}
	if code, out := crtx("verify", rec.ExecutionID, "--require-anchor"); code != 1 {
		t.Errorf("verify --require-anchor without --rpc: %d\n%s", code, out)
	}
	if code, out := crtx("verify", rec.ExecutionID, "--require-anchor", "--rpc", net.RPC); code != 0 {
		t.Errorf("verify --require-anchor with --rpc: %d\n%s", code, out)
	}
}
