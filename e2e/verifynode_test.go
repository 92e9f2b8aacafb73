package e2e_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// examples/verify-node/verify.mjs, a verifier written from docs/verify.md
// and docs/ledger.md alone (JavaScript, no dependencies, none of this
// repository's code), verifies a completed and a failed execution of a live
// marketplace, and fails when the ledger authority key it is given is not
// the marketplace's.
func TestIndependentVerifier(t *testing.T) {
	m := newMarket(t, "10")
	wk, err := m.anon.WellKnown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	verify := verifyNode(t)
	pinned := func(id, authority string) []string {
		return []string{"--base", m.d.URL, "--key", m.key.Token(), "--execution", id,
			"--authority", authority, "--marketplace", wk.SigningPublicKey}
	}

	if code, out := verify("--self-test"); code != 0 {
		t.Fatalf("self-test: exit %d\n%s", code, out)
	}
	svc := newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		return "Größe: " + r.Task + " ✓", 0, nil
	})
	done := m.ran(t, m.key, m.list(svc, "0.0007")) // a fee below 0.0001 USDC: ECMAScript writes it 0.000007
	failing := fault(t, func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
		msg := "model overloaded"
		replyJSON(w, crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "failed", Error: &msg})
	})
	_, err = m.key.Execute(ctx, m.list(failing, "0.05"), run("x"), client.ExecuteOptions{})
	failed := wantCode(t, err, 500, "execution_failed")

	private, err := m.key.Execute(ctx, m.list(svc, "0.05"), crtx.ExecuteParams{Task: "secret", Private: true}, client.ExecuteOptions{})
	if err != nil || private.IPFSURL != nil {
		t.Fatalf("private execution: %+v, %v", private, err)
	}

	for _, id := range []string{done.ExecutionID, *failed.ExecutionID, private.ExecutionID} {
		// Without a chain the ledger is anchored nowhere: said, and no failure.
		if code, out := verify(pinned(id, wk.AuthorityPublicKey)...); code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "\nverified") ||
			!strings.Contains(out, "\n-    anchor: not anchored yet: the devnet ledger is not anchored on Solana") {
			t.Errorf("execution %s: exit %d\n%s", id, code, out)
		}
	}
	// A marketplace whose authority is not the one the verifier trusts.
	if code, out := verify(pinned(done.ExecutionID, wk.SigningPublicKey)...); code != 1 || !strings.Contains(out, "NOT verified") ||
		!regexp.MustCompile(`(?m)^FAIL .*authority signature`).MatchString(out) {
		t.Errorf("with another authority key: exit %d\n%s", code, out)
	}
	m.rollup()
	m.checkLedger()
}

// verifyNode returns a function that runs examples/verify-node/verify.mjs
// with args and returns its exit code and output.
func verifyNode(t *testing.T) func(args ...string) (int, string) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	return func(args ...string) (int, string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		out, err := exec.CommandContext(c, node, append([]string{"../examples/verify-node/verify.mjs"}, args...)...).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		return 0, string(out)
	}
}
