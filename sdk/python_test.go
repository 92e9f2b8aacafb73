// Package sdk_test runs the SDKs written in other languages against a real
// marketplace, each with its own test runner.
package sdk_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
)

// python is Debian's interpreter (the pyenv shims on PATH may lack the
// cryptography package) or, without it, python3 from PATH, when it has
// cryptography's Ed25519; "" otherwise.
func python() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").Run() == nil {
			return path
		}
	}
	return ""
}

// The Python SDK's tests (sdk/python/tests) against crtxd on 127.0.0.1: an
// agent served with the SDK is listed with a creator wallet holding the
// collateral, executed, paid and verified by the SDK's caller side with a
// funded devnet key.
func TestPythonSDK(t *testing.T) {
	py := python()
	if py == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 with the cryptography package is required in CI (apt-get install python3-cryptography)")
		}
		t.Skip("no python3 with the cryptography package (Debian: python3-cryptography)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var logs bytes.Buffer
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // the tests sign in from one address
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), true, &logs
	cfg.BlockInterval = 50 * time.Millisecond // the verifier waits for its transactions' blocks
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	// The creator's wallet holds exactly the collateral of one listing at
	// 0.01 USDC.
	_, creator, _ := ed25519.GenerateKey(nil)
	if _, err := d.Market.OperatorDeposit(ctx, crtx.Mainnet, crtx.Address(creator.Public().(ed25519.PublicKey)), 10*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	_, caller, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(caller.Public().(ed25519.PublicKey))
	if _, err := d.Market.OperatorDeposit(ctx, crtx.Devnet, wallet, 5*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	session, _, err := client.New(d.URL, "").SignIn(ctx, caller)
	if err != nil {
		t.Fatal(err)
	}
	key, err := session.CreateKey(ctx, client.KeyParams{Name: "python", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Dir = "python"
	cmd.Env = append(os.Environ(), "CRTX_TEST_URL="+d.URL, "CRTX_TEST_API_KEY="+key.Key,
		"CRTX_TEST_CREATOR_SEED="+hex.EncodeToString(creator.Seed()), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		l := logs.String()
		t.Fatalf("python3 -m unittest: %v\n%s\nthe marketplace's log, its end:\n%s", err, out, l[max(0, len(l)-8000):])
	}
	// Every test ran: none skipped for want of the marketplace.
	if !strings.Contains(string(out), "\nOK\n") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python3 -m unittest did not run every test:\n%s", out)
	}
	t.Logf("%s", out)

	// What the Python side did is on the ledgers: the caller paid for its
	// executions, and both ledgers still verify and sum to zero.
	w, err := client.New(d.URL, key.Key).Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Balances[crtx.Devnet].Available; got >= 5*crtx.MicroPerUSDC || got <= 0 {
		t.Errorf("the caller's devnet balance is %s USDC after the Python tests' executions", got)
	}
	for _, env := range crtx.Environments {
		r, err := market.VerifyLedger(ctx, d.Store, env, d.Market.AuthorityPublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if r.Sum != 0 || !r.OK() {
			t.Errorf("%s ledger: sum %s, problems %v", env, r.Sum, r.Problems)
		}
	}
}
